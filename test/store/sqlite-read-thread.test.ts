import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/store/database.js';
import { SqliteReadThread } from '../../src/store/sqlite-read-thread.js';
import { ROOT, TEMPLATE_DB } from '../helpers/paths.js';

// Searches on a SQLite mirror read through connections on worker threads (src/store/sqlite-read-thread.ts):
// its rows must be the main connection's, it must see the main connection's writes at once, and the event
// loop must turn while it reads.
let file: string;
let store: Store;
let native: Database.Database;

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), 'read-thread-')), 'mirror.db');
  copyFileSync(TEMPLATE_DB, file);
  store = await openStore(file);
  native = new Database(file);
});
afterAll(async () => {
  native?.close();
  await store?.close();
});

/**
 * A statement that counts to `n` in a recursive CTE: it reads no table and takes SQLite some
 * 100 ns a row, so a few million rows hold whatever thread runs it for a while.
 */
const countTo = (n: number) => `with recursive c(i) as (select 1 union all select i + 1 from c where i < ${n}) select count(*) as n from c`;

describe('the SQLite read thread', () => {
  it('answers any page of listings as the main connection does, same rows and same key order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 25_000 }),
        fc.constantFrom('price', 'id', 'listed_at'),
        async (limit, offset, order) => {
          const query = store.db.selectFrom('listings').selectAll().orderBy(order).orderBy('id').limit(limit).offset(offset);
          const [main, thread] = [
            await query.execute(),
            await store.readDb.selectFrom('listings').selectAll().orderBy(order).orderBy('id').limit(limit).offset(offset).execute(),
          ];
          expect(thread).toEqual(main);
          if (thread.length) expect(Object.keys(thread[0])).toEqual(Object.keys(main[0]));
        },
      ),
      { numRuns: 25, seed: 2016 },
    );
  });

  it('sees a write of the main connection as soon as it is committed', async () => {
    const id = (await store.db.selectFrom('listings').select('id').limit(1).executeTakeFirstOrThrow()).id;
    const price = async () =>
      (await store.readDb.selectFrom('listings').select('price').where('id', '=', id).executeTakeFirstOrThrow()).price;
    const before = Number(await price());
    await store.db
      .updateTable('listings')
      .set({ price: before + 1 })
      .where('id', '=', id)
      .execute();
    expect(Number(await price())).toBe(before + 1);
    await store.db.updateTable('listings').set({ price: before }).where('id', '=', id).execute();
    expect(Number(await price())).toBe(before);
  });

  it('reads only: a write is refused, and an error comes back with SQLite code and message', async () => {
    const count = native.prepare('select count(*) as n from listings').get() as { n: number };
    await expect(sql`delete from listings`.execute(store.readDb)).rejects.toThrow(/reads|rows only|readonly/i);
    await expect(sql`select * from no_such_table`.execute(store.readDb)).rejects.toMatchObject({
      code: 'SQLITE_ERROR',
      message: expect.stringMatching(/no such table/),
    });
    expect(native.prepare('select count(*) as n from listings').get()).toEqual(count);
    // It goes on answering after an error.
    expect((await sql<{ n: number }>`select count(*) as n from listings`.execute(store.readDb)).rows[0].n).toBe(count.n);
  });

  it('the event loop turns while it reads (the main connection holds it for the whole statement)', async () => {
    /** setImmediate turns taken while `read` was pending. */
    const turnsDuring = async (read: () => Promise<unknown>) => {
      let turns = 0;
      let reading = true;
      const spin = () => {
        if (!reading) return;
        turns++;
        setImmediate(spin);
      };
      setImmediate(spin);
      const answer = await read();
      reading = false;
      return { turns, answer };
    };
    const onThread = await turnsDuring(() => sql.raw<{ n: number }>(countTo(3_000_000)).execute(store.readDb));
    const onMain = await turnsDuring(() => sql.raw<{ n: number }>(countTo(3_000_000)).execute(store.db));
    expect(onThread.answer).toEqual(onMain.answer);
    // On the main thread only the awaits around the statement give turns; on the worker, every moment it reads does.
    expect(onMain.turns).toBeLessThan(5);
    expect(onThread.turns).toBeGreaterThan(50);
  });

  it('reads are shared among two threads: a short read given after a long one is answered first', async () => {
    // Two reads at once start both threads, so that neither waits below for a thread to start.
    await Promise.all([sql`select 1`.execute(store.readDb), sql`select 2`.execute(store.readDb)]);
    const finished: string[] = [];
    const long = sql
      .raw<{ n: number }>(countTo(5_000_000))
      .execute(store.readDb)
      .then((r) => {
        finished.push('long');
        return r;
      });
    const short = sql<{ n: number }>`select count(*) as n from listings`.execute(store.readDb).then((r) => {
      finished.push('short');
      return r;
    });
    const [longAnswer, shortAnswer] = await Promise.all([long, short]);
    expect(longAnswer.rows[0].n).toBe(5_000_000);
    expect(shortAnswer.rows[0].n).toBe((native.prepare('select count(*) as n from listings').get() as { n: number }).n);
    // With one thread the short read would wait in line behind the long one.
    expect(finished).toEqual(['short', 'long']);
  });

  it('a command whose only work left is a read waits for it: the thread is held while a query is pending', async () => {
    // The compiled module (global setup builds it), in a process of its own whose last step awaits the thread.
    const module = pathToFileURL(join(ROOT, 'dist', 'store', 'sqlite-read-thread.js')).href;
    // The first query is answered while the worker starts up (which holds the process by itself); the second
    // finds it started and idle, and only the hold taken for a pending query keeps the process until it answers.
    const script = `import { SqliteReadThread } from ${JSON.stringify(module)};
const thread = new SqliteReadThread(${JSON.stringify(file)});
await thread.all('select 1', []);
const rows = await thread.all(${JSON.stringify(countTo(1_000_000))}, []);
console.log(rows[0].n);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    expect(stdout.trim()).toBe('1000000');
  });

  it('SQLITE_READ_THREAD=off (or readThread false) reads on a second, read-only connection in this thread', async () => {
    expect(loadConfig({}).sqliteReadThread).toBe(true);
    expect(loadConfig({ SQLITE_READ_THREAD: 'off' }).sqliteReadThread).toBe(false);
    const single = await openStore(file, { readThread: false });
    try {
      expect(single.readDb).not.toBe(single.db);
      const first = await single.readDb.selectFrom('listings').select('id').limit(1).executeTakeFirstOrThrow();
      expect(first.id).toBeTruthy();
      // Read-only: a write through it fails, so nothing reaches the mirror but through the writer.
      await expect(single.readDb.deleteFrom('listings').where('id', '=', first.id).execute()).rejects.toThrow(/readonly/i);
      expect(await single.db.selectFrom('listings').select('id').where('id', '=', first.id).executeTakeFirst()).toBeDefined();
    } finally {
      await single.close();
    }
    expect(store.readDb).not.toBe(store.db);
  });

  it('an idle worker is stopped, never one with a query in flight; the next query starts another', async () => {
    // Idle after 50 ms: a read that takes longer is answered all the same (the timer runs only while none is pending).
    const thread = new SqliteReadThread(file, true, 0.05);
    try {
      expect(thread.running).toBe(false);
      expect((await thread.all(countTo(2_000_000), []))[0].n).toBe(2_000_000);
      await vi.waitFor(() => expect(thread.running).toBe(false), { timeout: 10_000, interval: 20 });
      const id = (native.prepare('select id from listings order by id limit 1').get() as { id: string }).id;
      expect(await thread.all('select id from listings order by id limit 1', [])).toEqual([{ id }]);
      expect(thread.running).toBe(true);
    } finally {
      await thread.close();
    }
  });

  it('once closed, refuses queries; a new one opens on the same file', async () => {
    const thread = new SqliteReadThread(file);
    expect((await thread.all('select count(*) as n from listings', []))[0].n).toBeGreaterThan(0);
    await thread.close();
    await expect(thread.all('select 1', [])).rejects.toThrow(/closed/);
    const again = new SqliteReadThread(file);
    expect(await again.all('select ? as a, ? as b', [1, 'x'])).toEqual([{ a: 1, b: 'x' }]);
    await again.close();
  });
});
