import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeListingChunks } from '../../src/estimate/pool-reader.js';
import { readWritten } from '../../src/search/index-delta.js';
import { openStore } from '../../src/store/database.js';
import { ListingsRepository } from '../../src/store/listings-repository.js';
import type { Database as Schema } from '../../src/store/schema.js';
import { LISTING_CHANGE_RULES } from '../../src/sync/listing-changes.js';
import { TEMPLATE_DB } from '../helpers/paths.js';
import { sqliteWithLog } from '../helpers/statement-log.js';

// Migration 034 on SQLite: the long reads in keyset pages (src/lib/keyset-pages.ts) seek each page on an index in the
// keys' order. Without it, SQLite took a search index on (kind, status) and sorted every active listing of the kind for
// each page of 1,000 (56 ms a page of the city's rentals, on the event loop, in every sync's minute of the soak).
// Checked twice: with the statistics the template holds, and with none, as after a first sync into a new file (SQLite
// gathers them when the store opens, before the sync has written a row).

/** A writable handle on a migrated template copy, with the template's statistics or with none. */
async function copyOfTemplate(statistics: boolean): Promise<Database.Database> {
  const file = join(mkdtempSync(join(tmpdir(), 'keyset-reads-')), 'mirror.db');
  copyFileSync(TEMPLATE_DB, file);
  await (await openStore(file)).close();
  // A connection reads the statistics when it opens: the copy is opened again once they are gone.
  if (!statistics) {
    const emptied = new Database(file);
    emptied.exec('delete from sqlite_stat1');
    emptied.close();
  }
  return new Database(file);
}

/** Checks that SQLite seeks each of `pages` (logged statements) with `seek` (a step of its plan), sorting nothing. */
function expectSought(sqlite: Database.Database, pages: readonly { sql: string; parameters: readonly unknown[] }[], seek: string): void {
  for (const page of pages) {
    const plan = (sqlite.prepare(`explain query plan ${page.sql}`).all(...page.parameters) as { detail: string }[])
      .map((step) => step.detail)
      .join('; ');
    expect(plan).toContain(seek);
    expect(plan).not.toContain('TEMP B-TREE');
  }
}

describe.each([
  ['with the statistics', true],
  ['without statistics', false],
])('keyset reads seek their pages on an index, no sort (migration 034, SQLite), %s', (_name, statistics) => {
  let sqlite: Database.Database;
  beforeAll(async () => {
    sqlite = await copyOfTemplate(statistics);
  });
  afterAll(() => sqlite?.close());

  it("the estimates' pool: every active listing of a kind, in id order, each page through listings_active_by_id", async () => {
    const expected = (
      sqlite.prepare("select id from listings where status = 'ACTIVE' and kind = 'rental'").pluck().all() as string[]
    ).sort();
    expect(expected.length).toBeGreaterThan(2_000);
    const { db, statements } = sqliteWithLog<Schema>(new Database(sqlite.name, { readonly: true }));
    try {
      const ids: string[] = [];
      for await (const page of activeListingChunks(db, 'rental')) ids.push(...page.map((row) => row.id));
      expect(ids).toEqual(expected);
      expect(statements.length).toBe(Math.floor(expected.length / 1_000) + 1);
      expectSought(sqlite, statements, 'USING INDEX listings_active_by_id (kind=? AND id>?)');
    } finally {
      await db.destroy();
    }
  });

  it("a sync's sweep of its scope: the ids of the scope's active crawled listings, on the same index, its entries tested", async () => {
    // A crawl of Brooklyn's sales that found none: the sweep takes every active crawled one off the market.
    const expected = sqlite
      .prepare("select count(*) from listings where kind = 'sale' and borough_id = 200 and status = 'ACTIVE' and synthetic = 0")
      .pluck()
      .get() as number;
    expect(expected).toBeGreaterThan(0);
    const { db, statements } = sqliteWithLog<Schema>(sqlite);
    const result = await new ListingsRepository(db).apply(
      [],
      () => {
        throw new Error('no record to derive');
      },
      LISTING_CHANGE_RULES,
      new Date().toISOString(),
      { sweep: { kind: 'sale', boroughId: 200 } },
    );
    expect(result.delisted).toBe(expected);
    const pages = statements.filter((s) =>
      /^select "listings"."id", .* from "listings" left join "crawl_staging" .*order by "listings"."id"/.test(s.sql),
    );
    expect(pages.length).toBeGreaterThan(0);
    expectSought(sqlite, pages, 'USING COVERING INDEX listings_active_by_id (kind=? AND id>?)');
    // Each id tested against the crawl's staged rows by their primary key (migration 036).
    expectSought(sqlite, pages, 'USING COVERING INDEX sqlite_autoindex_crawl_staging_1 (crawl_id=? AND listing_id=?)');
  });

  it("the search index's delta: the rows written since a version, in (data_version, id) pages on listings_data_version", async () => {
    const before = sqlite.prepare('select max(data_version) from listings').pluck().get() as number;
    sqlite.prepare('update listings set data_version = ? where rowid % 4 = 0').run(before + 1);
    const expected = (sqlite.prepare('select id from listings where data_version > ?').pluck().all(before) as string[]).sort();
    expect(expected.length).toBeGreaterThan(1_000);
    const { db, statements } = sqliteWithLog<Schema>(new Database(sqlite.name, { readonly: true }));
    try {
      const written = await readWritten(db, new Map(), before);
      expect([...(written?.listings.keys() ?? [])].sort()).toEqual(expected);
      const pages = statements.filter((s) => s.sql.includes('order by "data_version", "id"'));
      expect(pages.length).toBe(Math.floor(expected.length / 1_000) + 1);
      expectSought(sqlite, pages, 'USING INDEX listings_data_version (data_version>?)');
    } finally {
      await db.destroy();
    }
  });
});
