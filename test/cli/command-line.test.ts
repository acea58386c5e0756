import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT, SHARED_DATA, SHARED_DATA_WITHOUT_RENTHOP, TEMPLATE_DB, TEMPLATE_WITHOUT_RENTHOP_DB } from '../helpers/paths.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';

// The command line as a person meets it: help, version, named mistakes with exit code 2, and serve.
// A database of its own: a command must never write into the checkout's data/ folder.
const env = {
  ...process.env,
  SHARED_DATA_DIR: SHARED_DATA,
  LOG_LEVEL: 'info',
  DATABASE_URL: join(mkdtempSync(join(tmpdir(), 'cli-')), 'mirror.db'),
};
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliWith(env, ...args);
}
async function cliWith(withEnv: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { cwd: ROOT, env: withEnv });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the command line', () => {
  it('--help and help print the usage and exit 0; --version prints the version', async () => {
    for (const args of [['--help'], ['help']]) {
      const res = await cli(...args);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain('usage: nyc-listings <command>');
      expect(res.stdout).toContain('serve [--port N] [--host H]');
    }
    const version = await cli('--version');
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  it('an unknown command, an unknown flag or a bad value is named, with the usage, and exits 2', async () => {
    for (const [args, named] of [
      [['bogus'], 'unknown command "bogus"'],
      [['serve', '--bogus'], '--bogus'],
      [['serve', '--port', '0'], '--port must be a whole number from 1 to 65535'],
      [['serve', '--port', 'abc'], 'got "abc"'],
      [['keys', 'frob'], 'unknown keys command "frob"'],
      [['serve', '--api-only'], 'serve --api-only starts no local emulator: set UPSTREAM_URL and OPEN_DATA_URL'],
      [['upstream', '--open-data-port', '70000'], '--open-data-port must be a whole number from 1 to 65535, got "70000"'],
    ] as const) {
      const res = await cli(...args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toContain(named);
      expect(res.stderr).toContain('usage: nyc-listings');
    }
  });

  it('without the shared data, serve and upstream fail at once with one line naming SHARED_DATA_DIR and what it must hold', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-shared-data-'));
    for (const command of ['serve', 'upstream']) {
      const res = await cliWith({ ...env, SHARED_DATA_DIR: empty, DATABASE_URL: join(empty, 'mirror.db') }, command, '--port', '1');
      expect(res.code, command).toBe(1);
      const lines = res.stderr.split('\n').filter(Boolean);
      expect(lines, res.stderr).toHaveLength(1);
      expect(lines[0]).toContain(`SHARED_DATA_DIR (${empty}) must hold`);
      expect(lines[0]).toContain('ny-house-market/NY-House-Dataset.csv');
    }
  });

  it('on a terminal, sync shows a progress bar and readable log lines; piped, JSON lines', async () => {
    // The city less its RentHop rentals: what is looked at is how the sync reports, not what it syncs.
    const db = join(mkdtempSync(join(tmpdir(), 'tty-')), 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, db);
    const syncEnv = { ...env, DATABASE_URL: db, MARKET_CLOCK: 'off', SHARED_DATA_DIR: SHARED_DATA_WITHOUT_RENTHOP };
    // util-linux `script` gives the command a pseudo-terminal, as a person's shell would.
    const { stdout: onTerminal } = await promisify(execFile)(
      'script',
      ['-qec', `${process.execPath} ${CLI} sync --source listings`, '/dev/null'],
      { cwd: ROOT, env: syncEnv },
    );
    expect(onTerminal).toMatch(/scopes\s+\[[█░]+\] 10\/10/);
    expect(onTerminal).toMatch(/INFO.*sync done/);
    expect(onTerminal).not.toContain('"level":30');
    const piped = await cliWith(syncEnv, 'sync', '--source', 'listings');
    expect(piped.code).toBe(0);
    expect(
      piped.stderr
        .split('\n')
        .filter(Boolean)
        .every((line) => line.startsWith('{')),
    ).toBe(true);
  }, 120_000);

  it('serve --port --host listens there at once and says where, with the docs URL and the data counts; the search index follows', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as { port: number };
        server.close(() => resolve(p));
      });
    });
    const db = join(mkdtempSync(join(tmpdir(), 'serve-')), 'mirror.db');
    copyFileSync(TEMPLATE_DB, db);
    const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
      cwd: ROOT,
      env: { ...env, DATABASE_URL: db, MARKET_CLOCK: 'off', SYNC_INTERVAL_SECONDS: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let text = '';
      const lineOf = (needle: string) =>
        new Promise<string>((resolve, reject) => {
          const look = () => {
            const found = text.split('\n').find((l) => l.includes(needle));
            if (found) resolve(found);
          };
          child.stderr.on('data', (chunk: Buffer) => {
            text += chunk.toString();
            look();
          });
          child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${text}`)));
          look();
        });
      const logged = JSON.parse(await lineOf('nyc-listings listening'));
      expect(logged.address).toBe(`http://127.0.0.1:${port}`);
      expect(logged.docs).toBe(`http://127.0.0.1:${port}/docs`);
      expect(logged.rentals).toBe(rentalRows().length);
      expect(logged.sales).toBe(saleRows().length);
      expect(logged.msg).toContain(`http://127.0.0.1:${port}`);
      const index = await request(`http://127.0.0.1:${port}/`);
      expect(index.statusCode).toBe(200);
      expect(((await index.body.json()) as { name: string }).name).toBe('nyc-listings');
      // After it listened, it built the search index in the background: it holds what the store holds.
      const built = JSON.parse(await lineOf('search index of')) as { rental?: number; sale?: number };
      expect({ rentals: built.rental, sales: built.sale }).toEqual({ rentals: logged.rentals, sales: logged.sales });
      const lines = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { msg: string });
      expect(lines.findIndex((l) => l.msg.startsWith('search index of'))).toBeGreaterThan(
        lines.findIndex((l) => l.msg.includes('nyc-listings listening')),
      );
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
