import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { openStore, type Store } from '../../src/store/database.js';
import { WalCheckpointer } from '../../src/store/wal-checkpoints.js';
import { waitFor } from '../helpers/wait.js';

// SQLite's write-ahead log checkpoints in a thread of their own (src/store/wal-checkpoints.ts, SQLITE_CHECKPOINT_SECONDS):
// the writer's connection leaves the log as it commits, and the thread copies it into the database file.
const ROWS = 2_000;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** A store on a new SQLite file, with `rows` sightings written in one transaction (a few hundred pages of log). */
async function storeWithWrite(walCheckpointSeconds: number, warnings: string[], walRestartPages?: number) {
  const file = join(mkdtempSync(join(tmpdir(), 'wal-checkpoints-')), 'mirror.db');
  store = await openStore(file, {
    walCheckpointSeconds,
    walRestartPages,
    warn: (message, cause) => warnings.push(`${message}: ${cause}`),
  });
  // The migrations' tables into the file first, so that a copy of the file alone holds them, and what follows is the write's.
  await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
  const seenAt = '2026-11-29T00:00:00.000Z';
  await store.db
    .insertInto('listing_sightings')
    .values(Array.from({ length: ROWS }, (_, i) => ({ listing_id: `listing-${i}`, last_seen_at: seenAt })))
    .execute();
  return { file, store };
}

/**
 * The sightings the database file holds without its log: a copy of the file alone, opened on its own. Null while the
 * file alone does not hold the table yet (its migrations still only in the log).
 * @throws SqliteError when the copy is torn (taken while a checkpoint wrote pages).
 */
function sightingsInFileAlone(file: string): number | null {
  const copy = join(mkdtempSync(join(tmpdir(), 'wal-checkpoints-copy-')), 'alone.db');
  copyFileSync(file, copy);
  const alone = new Database(copy);
  try {
    const table = alone.prepare("select 1 from sqlite_master where type = 'table' and name = 'listing_sightings'").get();
    return table ? (alone.prepare('select count(*) as n from listing_sightings').get() as { n: number }).n : null;
  } finally {
    alone.close();
  }
}

describe("SQLite's checkpoints in their thread", () => {
  it('copy what the writer committed into the database file, shown in the state and the metrics', async () => {
    const warnings: string[] = [];
    const { file, store: opened } = await storeWithWrite(0.05, warnings);
    const checkpoints = opened.checkpoints!;
    // Waited for in the file itself: a state that shows the whole log copied may be of a checkpoint that ran before the
    // write committed (its report still on its way, or the migrations' log copied while the write was under way).
    // A copy taken while the thread writes pages may be torn: it is read again.
    await waitFor(() => {
      try {
        return sightingsInFileAlone(file) === ROWS;
      } catch {
        return false;
      }
    }, "the write's rows in the database file alone");
    await waitFor(() => {
      const s = checkpoints.state();
      return s.walFrames !== null && s.walFrames > 0 && s.checkpointedFrames === s.walFrames;
    }, 'a checkpoint of the whole log');

    const metrics = new Metrics({ defaultMetrics: false });
    metrics.observe({ walCheckpoints: () => checkpoints.state() });
    const { body } = await metrics.scrape();
    const state = checkpoints.state();
    const sample = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);
    expect(state).toMatchObject({ running: true, failures: 0, lastError: null });
    expect(sample('nyc_listings_sqlite_checkpoints_running')).toBe(1);
    // Read at the scrape: as many as the state held then, or more (one every 50 ms).
    expect(sample('nyc_listings_sqlite_checkpoints')).toBeGreaterThanOrEqual(1);
    expect(sample('nyc_listings_sqlite_checkpoints')).toBeLessThanOrEqual(state.checkpoints);
    expect(sample('nyc_listings_sqlite_checkpoint_failures')).toBe(0);
    expect(sample('nyc_listings_sqlite_wal_frames')).toBeGreaterThan(0);

    await opened.close();
    store = undefined;
    expect(checkpoints.state().running).toBe(false);
    // Stopped on purpose: nothing to warn of.
    expect(warnings).toEqual([]);
  });

  it('start the log over once it holds the restart threshold and all of it is copied, the writer writing on', async () => {
    const { file, store: opened } = await storeWithWrite(0.05, [], 50);
    const checkpoints = opened.checkpoints!;
    // A writer that commits every few milliseconds: SQLite by itself would start the log over only if a writer began
    // at a moment when every page was copied.
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await opened.db
          .insertInto('listing_sightings')
          .values({ listing_id: `later-${i}`, last_seen_at: '2026-11-29T00:00:00.000Z' })
          .execute();
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await waitFor(() => checkpoints.state().restarts >= 1, 'the log started over');
    writing = false;
    await writer;
    expect(checkpoints.state()).toMatchObject({ running: true, failures: 0 });
    // Everything written before the restart is in the file alone.
    expect(sightingsInFileAlone(file)).toBeGreaterThanOrEqual(ROWS);
  });

  it('are off at 0: the writer checkpoints only past its threshold, so a small write stays in the log', async () => {
    const { file, store: opened } = await storeWithWrite(0, []);
    expect(opened.checkpoints).toBeNull();
    expect(sightingsInFileAlone(file)).toBe(0);
  });

  it('hand the checkpoints back to the writer, warn and show why when their thread stops', async () => {
    // A thread that cannot open its file stops at once: the path a thread that dies later takes too.
    const missing = join(mkdtempSync(join(tmpdir(), 'wal-checkpoints-')), 'no-such-folder', 'mirror.db');
    const warnings: string[] = [];
    let restored = 0;
    const checkpoints = new WalCheckpointer(
      missing,
      1,
      100,
      async () => ({ busy: 1, log: 0, checkpointed: 0 }),
      () => void restored++,
      (message, cause) => warnings.push(`${message}: ${cause}`),
    );
    await waitFor(() => !checkpoints.state().running, 'the thread to stop');
    expect(restored).toBe(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/thread stopped; the writer's connection checkpoints as it commits again: .*open/i);
    const state = checkpoints.state();
    expect(state.lastError).toMatch(/open/i);
    expect(state.lastErrorAt).not.toBeNull();
    expect(state.checkpoints).toBe(0);
    // Closing a stopped thread neither waits nor warns again.
    await checkpoints.close();
    expect(warnings).toHaveLength(1);
  });

  it("never refuse the writer's transaction that read before the log was started over", async () => {
    const { file, store: opened } = await storeWithWrite(0, []);
    // Another connection to the file (the checkpoints' thread, or another process): every page copied, it starts the log
    // over if nothing holds it.
    const thread = new Database(file);
    thread.pragma('busy_timeout = 200');
    try {
      expect(thread.pragma('wal_checkpoint(PASSIVE)')).toEqual([expect.objectContaining({ busy: 0 })]);
      const written = await opened.db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('listing_sightings')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        // The writer holds its lock from `begin` (immediate): the other connection cannot start the log over under it. A
        // deferred transaction let it, and its insert below then failed with SQLITE_BUSY_SNAPSHOT.
        expect(thread.pragma('wal_checkpoint(TRUNCATE)')).toEqual([expect.objectContaining({ busy: 1 })]);
        await trx
          .insertInto('listing_sightings')
          .values({ listing_id: 'listing-after', last_seen_at: '2026-11-29T00:00:01.000Z' })
          .execute();
        return Number(before.n) + 1;
      });
      const after = await opened.db
        .selectFrom('listing_sightings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(written);
      expect(written).toBe(ROWS + 1);
    } finally {
      thread.close();
    }
  });
});
