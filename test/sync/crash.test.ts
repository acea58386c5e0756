import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT, SHARED_DATA_WITHOUT_RENTHOP, TEMPLATE_WITHOUT_RENTHOP_DB } from '../helpers/paths.js';
import { stagedRows, storedListings } from '../helpers/stored-listings.js';

function counts(file: string) {
  const db = new Database(file);
  try {
    return {
      integrity: db.pragma('integrity_check', { simple: true }),
      listings: (db.prepare('select count(*) as n from listings').get() as { n: number }).n,
      amenities: (db.prepare('select count(*) as n from listing_amenities').get() as { n: number }).n,
      orphanAmenities: (
        db.prepare('select count(*) as n from listing_amenities where listing_id not in (select id from listings)').get() as { n: number }
      ).n,
    };
  } finally {
    db.close();
  }
}

/** Runs `nyc-listings sync --source listings` (the listings site's crawl) in a child process; kills it with SIGKILL after `killAfterScopes` scopes, if given. */
function sync(
  file: string,
  env: Record<string, string>,
  killAfterScopes?: number,
): Promise<{ code: number | null; signal: string | null; scopes: number; log: string }> {
  return new Promise((resolve) => {
    // Node itself on the compiled command line, no launcher: a launcher runs the script in a grandchild,
    // which a SIGKILL to the launcher would orphan, still writing while the test goes on.
    const child = spawn(process.execPath, [CLI, 'sync', '--source', 'listings'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: file,
        SHARED_DATA_DIR: SHARED_DATA_WITHOUT_RENTHOP,
        MARKET_CLOCK: 'off',
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let scopes = 0;
    let log = '';
    child.stderr.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      scopes += (chunk.toString().match(/"scope synced"/g) ?? []).length;
      if (killAfterScopes !== undefined && scopes >= killAfterScopes) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => resolve({ code, signal, scopes, log }));
  });
}

describe('a sync killed mid-crawl', () => {
  it('leaves the database consistent, and the next sync completes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'crash-')), 'mirror.db');
    copyFileSync(TEMPLATE_WITHOUT_RENTHOP_DB, file);
    const before = counts(file);
    // Slowed pages, so that the kill lands inside the work that follows the first scope.
    const killed = await sync(file, { LOCAL_UPSTREAM_FAULTS: 'latencyMs=25' }, 1);
    expect(killed.signal).toBe('SIGKILL');
    const after = counts(file);
    expect(after).toEqual({ ...before, integrity: 'ok' });
    expect(after.orphanAmenities).toBe(0);
    const again = await sync(file, {});
    expect(
      again.code,
      again.log
        .split('\n')
        .filter((l) => /"level":(40|50)/.test(l))
        .join('\n'),
    ).toBe(0);
    expect(again.scopes).toBe(10);
    expect(counts(file)).toEqual(before);
  }, 120_000);
});

describe('a failure inside the write step of a crawl', () => {
  it('rolls the whole crawl back: the store is unchanged', async () => {
    const { sql } = await import('kysely');
    const { startTestRuntime } = await import('../helpers/runtime.js');
    let now = Date.now();
    const rt = await startTestRuntime({}, { clock: () => new Date(now), manualMarketClock: true, withoutRentHop: true });
    try {
      const snapshot = () => storedListings(rt.store.db);
      // A day of market moves, so the crawl has inserts, price changes and delistings to write.
      now += 24 * 3_600_000;
      rt.marketClock!.advance(24 * 3_600_000);
      const before = await snapshot();
      // The staged crawl is written in the order of its ids: the Manhattan sale with the greatest id is in its last batch.
      // Fail there, as the crawl writes when it saw it (every listing of the crawl is, where only the changed ones are
      // rewritten).
      const last = await rt.store.db
        .selectFrom('listings')
        .select('id')
        .where('kind', '=', 'sale')
        .where('borough_id', '=', 100)
        .where('status', '=', 'ACTIVE')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      await sql
        .raw(
          `create trigger injected_failure before update on listing_sightings when new.listing_id = '${last.id}' begin select raise(abort, 'injected write failure'); end`,
        )
        .execute(rt.store.db);
      await expect(rt.syncer.syncScope('sale', 100)).rejects.toThrow(/injected write failure/);
      expect(await snapshot()).toEqual(before);
      // What the crawl staged went with it (store/crawl-staging.ts).
      expect(await stagedRows(rt.store.db)).toBe(0);
      await sql.raw('drop trigger injected_failure').execute(rt.store.db);
      await rt.syncer.syncScope('sale', 100);
      expect((await snapshot()).rows).not.toEqual(before.rows);
    } finally {
      await rt.close();
    }
  });
});
