import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketFiguresByRank } from '../../src/domain/market.js';
import { openStore, type Store } from '../../src/store/database.js';
import { MarketRepository } from '../../src/store/market-repository.js';
import type { Database as Schema } from '../../src/store/schema.js';
import { TEMPLATE_DB } from '../helpers/paths.js';
import { sqliteWithLog } from '../helpers/statement-log.js';

// Migration 014 on SQLite: a page of some areas in the price or the recommended order walks that order's
// index and tests area and bedrooms on the index entries, reading the table only for the page's own
// columns. Seen in the statement's bytecode: which columns it reads from the table's cursor.
let store: Store;
let sqlite: Database.Database;

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'order-indexes-')), 'mirror.db');
  copyFileSync(TEMPLATE_DB, file);
  store = await openStore(file);
  sqlite = new Database(file, { readonly: true });
});
afterAll(async () => {
  sqlite?.close();
  await store?.close();
});

/** The columns a statement (with its parameters) reads from the listings table's own rows (not from an index), in program order. */
function columnsReadFromTable(statement: string, parameters: readonly unknown[] = []): string[] {
  const columns = sqlite.prepare("select name from pragma_table_info('listings')").pluck().all() as string[];
  const tableRoot = sqlite.prepare("select rootpage from sqlite_master where type = 'table' and name = 'listings'").pluck().get();
  const program = sqlite.prepare(`explain ${statement}`).all(...parameters) as { opcode: string; p1: number; p2: number }[];
  const tableCursors = program.filter((op) => op.opcode === 'OpenRead' && op.p2 === tableRoot).map((op) => op.p1);
  return program.filter((op) => op.opcode === 'Column' && tableCursors.includes(op.p1)).map((op) => columns[op.p2]);
}

describe('the order indexes hold area and bedrooms (migration 014, SQLite)', () => {
  it.each([
    ['listings_price', 'price, id'],
    ['listings_recommended', 'recommended_score desc, listed_at desc, id desc'],
  ])('a page of Manhattan by %s tests areas and bedrooms on the index, not on table rows', (index, order) => {
    // Manhattan holds most rentals: walking the order is the plan, not reading the borough's areas and sorting.
    const manhattan = sqlite
      .prepare(
        'with recursive area(id) as (select 100 union all select a.id from areas a join area on a.parent_id = area.id) select id from area',
      )
      .pluck()
      .all() as number[];
    expect(manhattan.length).toBeGreaterThan(10);
    const page = `select id, street from listings where kind = 'rental' and status = 'ACTIVE' and area_id in (${manhattan.join(', ')}) and bedroom_count >= 1 order by ${order} limit 50`;
    const plan = (sqlite.prepare(`explain query plan ${page}`).all() as { detail: string }[]).map((step) => step.detail).join('; ');
    expect(plan).toContain(`USING INDEX ${index} `);
    // The page's own column (the id comes from the index) and nothing the filter needs.
    expect(columnsReadFromTable(page)).toEqual(['street']);
  });
});

// Migration 018 on SQLite: market figures of some areas read by rank (counts by bedrooms, known sizes and
// dates, the values at a rank of the price, price per square foot and listing date orders) are each read
// from an index alone. Before it, the date and price-per-square-foot walks read every passed entry's row
// for its area: 0.5 to 1.9 s a figure at a million listings. The bedroom counts are tested as
// `+bedroom_count` (market-repository.ts): through the bedroom index, each row was read.
describe('market figures of some areas read no table row (migration 018, SQLite)', () => {
  it.each([
    ['Brooklyn rentals', 'rental', 200, undefined],
    ['Brooklyn two-bedroom rentals', 'rental', 200, [2]],
    ['Queens rentals, studios and three bedrooms', 'rental', 300, [0, 3]],
    ['Manhattan sales', 'sale', 100, undefined],
  ] as const)('%s', async (_name, kind, borough, bedrooms) => {
    const areaIds = sqlite
      .prepare(
        'with recursive area(id) as (select ? union all select a.id from areas a join area on a.parent_id = area.id) select id from area',
      )
      .pluck()
      .all(borough) as number[];
    const { db, statements } = sqliteWithLog<Schema>(new Database(sqlite.name, { readonly: true }));
    try {
      const figures = await marketFiguresByRank(
        new MarketRepository(db).ranked(kind, areaIds, bedrooms ? [...bedrooms] : undefined),
        new Date(),
      );
      // Figures that read every kind of statement: counts, prices, sizes and dates all known somewhere.
      expect(figures.activeCount).toBeGreaterThan(0);
      expect(figures.medianPrice).not.toBeNull();
      expect(figures.medianDaysOnMarket).not.toBeNull();
      expect(statements.length).toBeGreaterThanOrEqual(6);
      for (const statement of statements) expect(columnsReadFromTable(statement.sql, statement.parameters), statement.sql).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});

// Migration 015 on SQLite: sales of some size by price per square foot. Whichever of its two plans the
// planner takes (walk the order's index, or take the size range and keep the page's rows in a sorter),
// the statement reads from the table only the page's own column: the size is tested on the order's
// index entry, and the sorter compares keys read from the size index before it seeks a row.
describe('a size filter by price per square foot reads only the page from the table (migration 015, SQLite)', () => {
  const where = "kind = 'sale' and status = 'ACTIVE' and sqft >= 500";
  it.each([
    ['listings_ppsf', `${where} and price_per_sqft is not null`],
    ['listings_sqft', where],
  ])('through %s', (index, terms) => {
    const page = `select id, street from listings indexed by ${index} where ${terms} order by price_per_sqft desc, id desc limit 50`;
    const plan = (sqlite.prepare(`explain query plan ${page}`).all() as { detail: string }[]).map((step) => step.detail).join('; ');
    expect(plan).toContain(`USING INDEX ${index} `);
    expect(columnsReadFromTable(page)).toEqual(['street']);
  });
});

// Migration 016: the hydration backlog is read oldest first, then by id, through its partial index. A
// crawl gives all its new listings one first_seen_at, so an index without the id sorted every waiting
// listing for each batch of a hundred.
describe('the hydration backlog (migration 016)', () => {
  it('comes oldest first, then by id, of one kind when asked, read through its index without a sort', async () => {
    const { ListingsRepository } = await import('../../src/store/listings-repository.js');
    const file = join(mkdtempSync(join(tmpdir(), 'backlog-')), 'mirror.db');
    copyFileSync(TEMPLATE_DB, file);
    const writable = new Database(file);
    const { db, statements } = sqliteWithLog<any>(writable);
    try {
      // Rows of both kinds and statuses wait; two crawls' worth of first_seen_at, many listings sharing one.
      const rows = writable.prepare('select id, kind, status from listings order by random() limit 3000').all() as {
        id: string;
        kind: string;
        status: string;
      }[];
      const waiting = rows.map((r, i) => ({ ...r, first_seen_at: i % 3 === 0 ? '2026-01-01T00:00:00.000Z' : '2026-02-01T00:00:00.000Z' }));
      const mark = writable.prepare('update listings set needs_detail = 1, first_seen_at = ?, status = ? where id = ?');
      writable.transaction(() => {
        for (const [i, r] of waiting.entries()) mark.run(r.first_seen_at, i % 10 === 0 ? 'OFF_MARKET' : r.status, r.id);
      })();
      const active = waiting.filter((r, i) => i % 10 !== 0 && r.status === 'ACTIVE');
      const oldestFirst = (list: typeof active) =>
        [...list].sort((x, y) => x.first_seen_at.localeCompare(y.first_seen_at) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));

      const repository = new ListingsRepository(db);
      expect(await repository.backlogCount()).toBe(active.length);
      expect(await repository.backlog(150)).toEqual(
        oldestFirst(active)
          .slice(0, 150)
          .map((r) => ({ id: r.id, kind: r.kind })),
      );
      const rentals = oldestFirst(active.filter((r) => r.kind === 'rental'));
      expect(rentals.length).toBeGreaterThan(100);
      expect(await repository.backlog(100, 'rental')).toEqual(rentals.slice(0, 100).map((r) => ({ id: r.id, kind: 'rental' })));

      for (const statement of statements) {
        const plan = (
          writable.prepare(`explain query plan ${statement.sql}`).all(...(statement.parameters as unknown[])) as { detail: string }[]
        )
          .map((s) => s.detail)
          .join('; ');
        expect(plan, statement.sql).toMatch(/USING (COVERING )?INDEX listings_backlog\b/);
        expect(plan, statement.sql).not.toContain('TEMP B-TREE');
      }
    } finally {
      await db.destroy();
    }
  });
});
