import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { ROOT } from '../helpers/paths.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

// The OpenAPI document the running app serves, through the two linters app developers use.
const t = useSharedTestRuntime('pro');
const run = promisify(execFile);
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
// Network traffic stays on this machine: no telemetry, no update check.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', DO_NOT_TRACK: '1' };

async function servedDocument(): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify((await get(t.rt.app, '/v1/openapi.json')).body));
  return file;
}

describe('the OpenAPI document passes both linters with no error and no warning', () => {
  it('Redocly CLI (recommended rules)', async () => {
    const file = await servedDocument();
    const { stdout } = await run(bin('redocly'), ['lint', file, '--format=json'], { cwd: ROOT, env }).catch((e) => e);
    const report = JSON.parse(stdout);
    expect(report.problems.map((p: { message: string }) => p.message)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('Spectral (spectral:oas)', async () => {
    const file = await servedDocument();
    const { stdout } = await run(bin('spectral'), ['lint', file, '--ruleset', join(ROOT, '.spectral.yaml'), '--format', 'json'], {
      cwd: ROOT,
      env,
    }).catch((e) => e);
    const results = JSON.parse(stdout.slice(0, stdout.lastIndexOf(']') + 1));
    expect(results.map((r: { code: string; message: string }) => `${r.code}: ${r.message}`)).toEqual([]);
  }, 60_000);
});
