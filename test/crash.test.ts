import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ROOT, SHARED_DATA, TEMPLATE_DB } from './helpers/paths.js';

function counts(file: string) {
  const db = new Database(file);
  try {
    return {
      integrity: db.pragma('integrity_check', { simple: true }),
      listings: (db.prepare('select count(*) as n from listings').get() as { n: number }).n,
      amenities: (db.prepare('select count(*) as n from listing_amenities').get() as { n: number }).n,
      orphanAmenities: (db.prepare('select count(*) as n from listing_amenities where listing_id not in (select id from listings)').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

/** Runs `nyc-listings sync` in a child process; kills it with SIGKILL after `killAfterScopes` scopes, if given. */
function sync(file: string, env: Record<string, string>, killAfterScopes?: number): Promise<{ code: number | null; signal: string | null; scopes: number }> {
  return new Promise((resolve) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), ['src/main.ts', 'sync'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: file, SHARED_DATA_DIR: SHARED_DATA, MARKET_CLOCK: 'off', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let scopes = 0;
    child.stderr.on('data', (chunk: Buffer) => {
      scopes += (chunk.toString().match(/"scope synced"/g) ?? []).length;
      if (killAfterScopes !== undefined && scopes >= killAfterScopes) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => resolve({ code, signal, scopes }));
  });
}

describe('a sync killed mid-crawl', () => {
  it('leaves the database consistent, and the next sync completes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'crash-')), 'mirror.db');
    copyFileSync(TEMPLATE_DB, file);
    const before = counts(file);
    // Slow pages so that the kill lands inside a crawl (Manhattan sales take 31 pages).
    const killed = await sync(file, { LOCAL_UPSTREAM_FAULTS: 'latencyMs=100' }, 1);
    expect(killed.signal).toBe('SIGKILL');
    const after = counts(file);
    expect(after).toEqual({ ...before, integrity: 'ok' });
    expect(after.orphanAmenities).toBe(0);
    const again = await sync(file, {});
    expect(again.code).toBe(0);
    expect(again.scopes).toBe(10);
    expect(counts(file)).toEqual(before);
  }, 120_000);
});
