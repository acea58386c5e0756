import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { BATCH_STATEMENT_CACHE_SIZE, BATCH_STATEMENT_PARAMETERS, statementCache } from '../../src/store/sqlite-statements.js';
import { TEMPLATE_DB } from '../helpers/paths.js';

// The SQLite statements Kysely runs are cached and read their rows as arrays, made objects by a
// generated literal (src/store/sqlite-statements.ts): every answer must be what better-sqlite3's own
// row objects hold, on the real mirror.
let store: Store;
let native: Database.Database;
let columns: string[];

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'statements-')), 'mirror.db');
  copyFileSync(TEMPLATE_DB, file);
  store = await openStore(file);
  native = new Database(file);
  columns = native.prepare('select name from pragma_table_info(?)').pluck().all('listings') as string[];
});
afterAll(async () => {
  native?.close();
  await store?.close();
});

const viaKysely = async (text: string) => (await sql.raw<Record<string, unknown>>(text).execute(store.db)).rows;
const viaBetterSqlite = (text: string) => native.prepare(text).all();

describe('SQLite rows read raw', () => {
  it('any columns of the listings, in any order and repeated, any page: the same rows as better-sqlite3 gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...columns), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 25_000 }),
        async (picked, limit, offset) => {
          const text = `select ${picked.map((c) => `"${c}"`).join(', ')} from listings order by id limit ${limit} offset ${offset}`;
          // Twice: the second run reuses the cached statement and its row builder.
          for (let i = 0; i < 2; i++) expect(await viaKysely(text)).toEqual(viaBetterSqlite(text));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('every column of every listing, names of two tables alike, odd names, aggregates and nothing at all', async () => {
    for (const text of [
      'select * from listings order by id',
      'select l.id, a.listing_id as id, a.amenity from listings l join listing_amenities a on a.listing_id = l.id order by 1, 3 limit 500',
      "select count(*), max(price), group_concat(distinct kind) from listings where status = 'ACTIVE'",
      "select * from listings where id = 'none'",
      'select id as __proto__, price as "constructor", kind as "a""b" from listings order by id limit 5',
    ]) {
      expect(await viaKysely(text), text).toEqual(viaBetterSqlite(text));
    }
  });

  it('a statement read before the table gains a column reads that column after', async () => {
    const text = 'select * from listings order by id limit 3';
    expect(Object.keys((await viaKysely(text))[0])).toEqual(columns);
    await sql`alter table listings add column statement_test text default 'added'`.execute(store.db);
    try {
      const rows = await viaKysely(text);
      expect(Object.keys(rows[0])).toEqual([...columns, 'statement_test']);
      expect(rows).toEqual(viaBetterSqlite(text));
    } finally {
      await sql`alter table listings drop column statement_test`.execute(store.db);
    }
    expect(await viaKysely(text)).toEqual(viaBetterSqlite(text));
  });

  it('a streamed query yields the same rows', async () => {
    const text = "select id, price, area_id from listings where kind = 'rental' order by id limit 200";
    const streamed: unknown[] = [];
    for await (const row of store.db
      .selectFrom('listings')
      .select(['id', 'price', 'area_id'])
      .where('kind', '=', 'rental')
      .orderBy('id')
      .limit(200)
      .stream())
      streamed.push(row);
    expect(streamed).toEqual(viaBetterSqlite(text));
  });
});

describe('the statement cache', () => {
  /** An insert of `rows` rows of two values each: a batch's statement past half {@link BATCH_STATEMENT_PARAMETERS} rows. */
  const insertOf = (rows: number) =>
    `insert into staged (a, b) values ${Array.from({ length: rows }, () => '(?, ?)').join(', ')} on conflict do nothing`;

  it("keeps a query prepared once; a batch's statements only a few at a time, without pushing the others out", () => {
    const connection = new Database(':memory:');
    connection.exec('create table staged (a integer primary key, b text)');
    const cache = statementCache(connection);
    const half = BATCH_STATEMENT_PARAMETERS / 2;
    try {
      const small = cache.prepare('select a, b from staged where a = ?');
      // Exactly the bound's parameters: not a batch's.
      const atBound = cache.prepare(insertOf(half));
      const full = cache.prepare(insertOf(2 * half));
      const first = cache.prepare(insertOf(half + 1));
      // As a crawl's pages: one statement a size, many more than the batches' cache holds, the full batch used between.
      for (let rows = half + 2; rows < half + 2 + 3 * BATCH_STATEMENT_CACHE_SIZE; rows++) {
        cache.prepare(insertOf(rows));
        expect(cache.prepare(insertOf(2 * half))).toBe(full);
      }
      expect(cache.prepare('select a, b from staged where a = ?')).toBe(small);
      expect(cache.prepare(insertOf(half))).toBe(atBound);
      // The first odd batch went, and is prepared again.
      expect(cache.prepare(insertOf(half + 1))).not.toBe(first);
    } finally {
      cache.close();
    }
  });
});
