import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadEnvFile } from '../src/config.js';
import { envExample, SETTINGS, settingsTable } from '../src/settings.js';

// The table of settings (src/settings.ts) is the one source of docs/configuration.md, and holds every variable
// the configuration (config.ts and config/) reads, with the default it falls back to.
const ROOT = join(import.meta.dirname, '..');

describe('the table of settings', () => {
  it('docs/configuration.md holds it exactly (npm run docs:config writes it)', () => {
    const page = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
    expect(page).toContain(`-->\n${settingsTable()}\n<!-- end of settings table -->`);
  });

  it('every variable the configuration reads (config.ts and config/) has a row, and every row is read', () => {
    const source = [join(ROOT, 'src', 'config.ts'), ...readdirSync(join(ROOT, 'src', 'config')).map((f) => join(ROOT, 'src', 'config', f))]
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const read = new Set([
      ...[...source.matchAll(/env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]),
      ...[...source.matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]),
      ...['FREE', 'STARTER', 'PRO', 'BUSINESS'].flatMap((plan) =>
        // biome-ignore lint/suspicious/noTemplateCurlyInString: config.ts's template, looked for as written.
        source.includes('`RATE_LIMIT_${upper}_PER_MINUTE`') ? [`RATE_LIMIT_${plan}_PER_MINUTE`, `QUOTA_${plan}_PER_MONTH`] : [],
      ),
    ]);
    expect([...read].sort()).toEqual(Object.keys(SETTINGS).sort());
  });

  it('each plain default is what loadConfig falls back to, and a value given replaces it', () => {
    const defaults = loadConfig({});
    expect(defaults.port).toBe(SETTINGS.PORT.default);
    expect(defaults.freshness.buildingSeconds).toBe(SETTINGS.FRESHNESS_BUILDING_SECONDS.default);
    expect(defaults.plans.pro.perMinute).toBe(SETTINGS.RATE_LIMIT_PRO_PER_MINUTE.default);
    expect(defaults.webhooks.schedule).toEqual(SETTINGS.WEBHOOK_RETRY_SCHEDULE_SECONDS.default);
    expect(defaults.trustProxy).toBe(SETTINGS.TRUST_PROXY.default);
    expect(defaults.featurePlans.webhooks).toBe(SETTINGS.MIN_PLAN_WEBHOOKS.default);
    expect(defaults.answerCacheBytes).toBe(SETTINGS.ANSWER_CACHE_MB.default * 1024 * 1024);
    expect(defaults.redisKeyPrefix).toBe(SETTINGS.REDIS_KEY_PREFIX.default);
    expect(loadConfig({ PORT: '9000', LOG_LEVEL: 'debug' })).toMatchObject({ port: 9000, logLevel: 'debug' });
  });

  it('.env.example lists every variable at its default, commented out (npm run docs:config writes it)', () => {
    expect(readFileSync(join(ROOT, '.env.example'), 'utf8')).toBe(envExample());
    for (const name of Object.keys(SETTINGS)) expect(envExample()).toMatch(new RegExp(`^#${name}=`, 'm'));
    // Read as a .env file, uncommented, it configures exactly the defaults.
    const uncommented = envExample()
      .split('\n')
      .filter((l) => /^#[A-Z][A-Z0-9_]*=/.test(l))
      .map((l) => l.slice(1))
      .join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'env-example-'));
    writeFileSync(join(dir, 'defaults.env'), uncommented);
    const env: NodeJS.ProcessEnv = { ENV_FILE: join(dir, 'defaults.env') };
    loadEnvFile(env);
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});

describe('the .env file', () => {
  it('fills what the environment does not set, and a variable already set wins', () => {
    const dir = mkdtempSync(join(tmpdir(), 'env-file-'));
    const file = join(dir, 'service.env');
    writeFileSync(file, 'PORT=9001\nLOG_LEVEL=debug\n# a comment\nDATABASE_URL="postgres://127.0.0.1/test"\n');
    const env: NodeJS.ProcessEnv = { ENV_FILE: file, LOG_LEVEL: 'warn' };
    expect(loadEnvFile(env)).toBe(file);
    expect(loadConfig(env)).toMatchObject({ port: 9001, logLevel: 'warn', databaseUrl: 'postgres://127.0.0.1/test' });
  });

  it('ENV_FILE naming a file that is not there is an error; no .env at all is none', () => {
    expect(() => loadEnvFile({ ENV_FILE: join(tmpdir(), 'no-such-dir-here', 'x.env') })).toThrow(ConfigError);
    const cwd = process.cwd();
    try {
      process.chdir(mkdtempSync(join(tmpdir(), 'no-env-')));
      expect(loadEnvFile({})).toBeNull();
    } finally {
      process.chdir(cwd);
    }
  });
});
