import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { TEMPLATE_DB } from '../helpers/paths.js';

// Reads outside a write go through a second, read-only connection on a SQLite file (`Store.readDb`,
// src/store/database.ts): its rows must be the main connection's, it must see the main connection's writes as soon
// as they are committed, and it must never write.
let file: string;
let store: Store;
let native: Database.Database;

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), 'read-connection-')), 'mirror.db');
  copyFileSync(TEMPLATE_DB, file);
  store = await openStore(file);
  native = new Database(file);
});
afterAll(async () => {
  native?.close();
  await store?.close();
});

describe('the SQLite read connection', () => {
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
    await expect(sql`delete from listings`.execute(store.readDb)).rejects.toThrow(/readonly/i);
    await expect(sql`select * from no_such_table`.execute(store.readDb)).rejects.toMatchObject({
      code: 'SQLITE_ERROR',
      message: expect.stringMatching(/no such table/),
    });
    expect(native.prepare('select count(*) as n from listings').get()).toEqual(count);
    // It goes on answering after an error.
    expect((await sql<{ n: number }>`select count(*) as n from listings`.execute(store.readDb)).rows[0].n).toBe(count.n);
  });

  it('is a connection of its own, not the writer, so that a read never waits behind a write transaction', async () => {
    expect(store.readDb).not.toBe(store.db);
    const id = (await store.db.selectFrom('listings').select('id').limit(1).executeTakeFirstOrThrow()).id;
    const price = Number((await store.readDb.selectFrom('listings').select('price').where('id', '=', id).executeTakeFirstOrThrow()).price);
    // A write transaction open on the writer, its change not committed: the reader answers at once, from the last commit.
    await store.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('listings')
        .set({ price: price + 1 })
        .where('id', '=', id)
        .execute();
      const read = await store.readDb.selectFrom('listings').select('price').where('id', '=', id).executeTakeFirstOrThrow();
      expect(Number(read.price)).toBe(price);
      await trx.updateTable('listings').set({ price }).where('id', '=', id).execute();
    });
  });
});
