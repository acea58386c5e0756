import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import type { Database as Schema } from '../../src/store/schema.js';
import { LockWaitingSqliteDialect } from '../../src/store/sqlite-lock-waits.js';
import { statementCache } from '../../src/store/sqlite-statements.js';

// The writer's connection waits for another connection's write lock on timers (src/store/sqlite-lock-waits.ts). The
// other connection here is in this same thread: had the store waited in SQLite's busy handler, which sleeps in the
// thread, the timer that ends the other transaction could never run, and the write would fail after 5 s instead.
const opened: { close: () => unknown }[] = [];
afterEach(async () => {
  while (opened.length) await opened.pop()!.close();
});

async function storeOnNewFile(): Promise<{ store: Store; file: string }> {
  const file = join(mkdtempSync(join(tmpdir(), 'lock-waits-')), 'mirror.db');
  const store = await openStore(file);
  opened.push(store);
  return { store, file };
}

/** Another connection to `file` holding the write lock (`begin immediate`) until `release()`. */
function holdWriteLock(file: string): { release: () => void } {
  const other = new Database(file);
  opened.push(other);
  other.prepare('begin immediate').run();
  return { release: () => other.prepare('commit').run() };
}

/** Ticks of a 5 ms timer while `work` runs: how often the event loop turned meanwhile. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ value: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  try {
    return { value: await work, ticks };
  } finally {
    clearInterval(timer);
  }
}

const sighting = (id: string) => ({ listing_id: id, last_seen_at: '2026-12-07T00:00:00.000Z' });

describe("SQLite's writer behind another connection's write lock", () => {
  it('waits on timers, the event loop turning, and writes once the lock is released: a statement alone and a transaction', async () => {
    const { store, file } = await storeOnNewFile();
    for (const write of [
      () => store.db.insertInto('listing_sightings').values(sighting('alone')).execute(),
      () => store.db.transaction().execute((trx) => trx.insertInto('listing_sightings').values(sighting('in-a-transaction')).execute()),
    ]) {
      const lock = holdWriteLock(file);
      let released = false;
      setTimeout(() => {
        released = true;
        lock.release();
      }, 200);
      const { ticks } = await ticksDuring(write().then(() => expect(released).toBe(true)));
      // 200 ms of waiting at 5 ms a tick: a busy handler sleeping in the thread would have let none through.
      expect(ticks).toBeGreaterThanOrEqual(10);
    }
    const rows = await store.db.selectFrom('listing_sightings').select('listing_id').orderBy('listing_id').execute();
    expect(rows.map((r) => r.listing_id)).toEqual(['alone', 'in-a-transaction']);
  });

  it('gives up with SQLite\'s own "database is locked" after the wait, having written nothing', async () => {
    const { store, file } = await storeOnNewFile();
    await store.close();
    opened.pop();
    const native = new Database(file);
    native.pragma('busy_timeout = 0');
    const db = new Kysely<Schema>({
      dialect: new LockWaitingSqliteDialect({ database: statementCache(native, { immediateTransactions: true }) }, 150),
    });
    opened.push({ close: () => db.destroy() });
    const lock = holdWriteLock(file);
    const started = performance.now();
    await expect(db.insertInto('listing_sightings').values(sighting('refused')).execute()).rejects.toMatchObject({
      code: 'SQLITE_BUSY',
      message: 'database is locked',
    });
    await expect(
      db.transaction().execute((trx) => trx.insertInto('listing_sightings').values(sighting('refused')).execute()),
    ).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    lock.release();
    expect(await db.selectFrom('listing_sightings').selectAll().execute()).toEqual([]);
    // The connection is usable again once the lock is free.
    await db.insertInto('listing_sightings').values(sighting('after')).execute();
    expect((await db.selectFrom('listing_sightings').select('listing_id').execute()).map((r) => r.listing_id)).toEqual(['after']);
  });
});
