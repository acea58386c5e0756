import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import type { Database as Schema } from '../../src/store/schema.js';
import { HELD_BY_ORDER_INDEX } from '../../src/search/filters.js';
import type { ListingSearch, SearchContext } from '../../src/search/listing-search.js';
import { pageStrategy } from '../../src/search/plan.js';
import { searchListings } from '../../src/search/query.js';
import { SORTS, type IndexedSort } from '../../src/search/sorts.js';
import { TEMPLATE_DB } from '../helpers/paths.js';
import { sqliteWithLog } from '../helpers/statement-log.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';

// How SQLite reads a page (pageStrategy): the same rows whichever way it is read, and each way runs the
// statement it says. On a copy of the real mirror; the store's own search function, statements logged.
let store: Store;
let sqlite: Database.Database;
let db: Kysely<Schema>;
let statements: CompiledQuery[];

beforeAll(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'page-strategy-')), 'mirror.db');
  copyFileSync(TEMPLATE_DB, file);
  store = await openStore(file); // migrated
  sqlite = new Database(file, { readonly: true });
  ({ db, statements } = sqliteWithLog<Schema>(sqlite));
});
afterAll(async () => {
  await db?.destroy();
  await store?.close();
});

const rentals = rentalRows();
const sales = saleRows();
const ctx = (activeOfKind?: number): SearchContext => ({ now: new Date(), mortgageFactor: 0.005, dialect: 'sqlite', activeOfKind });
const search = (s: Partial<ListingSearch>): ListingSearch => ({ kind: 'rental', sort: 'RECOMMENDED', sortDir: 'DESC', page: 1, perPage: 50, ...s });
/** Queens and every area below it, as the route expands `areas=300`. */
const queens = () => sqlite.prepare('with recursive area(id) as (select 300 union all select a.id from areas a join area on a.parent_id = area.id) select id from area').pluck().all() as number[];
const plan = (q: CompiledQuery) => (sqlite.prepare(`explain query plan ${q.sql}`).all(...(q.parameters as unknown[])) as { detail: string }[]).map((s) => s.detail).join('; ');

describe('how SQLite reads a page (pageStrategy)', () => {
  // An activeOfKind so large that every total counts as few (sort), and one so small that none does (walk when held).
  const SORT_ALWAYS = 1e15;
  const NEVER_SORT = 0;

  it.each([
    ['areas and bedrooms by price', () => search({ areaIds: queens(), minBeds: 1, sort: 'PRICE', sortDir: 'ASC' })],
    ['bedrooms, the default order ascending', () => search({ minBeds: 2, sortDir: 'ASC' })],
    ['listing dates by listing date', () => search({ listedAfter: '2000-01-01T00:00:00Z', sort: 'LISTED_AT', page: 3, perPage: 20 })],
    ['sizes by price per square foot', () => search({ minSqft: 600, maxSqft: 900, sort: 'PRICE_PER_SQFT', sortDir: 'ASC' })],
    ['a filter no order index holds', () => search({ minBaths: 2, sort: 'PRICE', sortDir: 'DESC', page: 2, perPage: 30 })],
    ['sales by price per square foot', () => search({ kind: 'sale', minSqft: 500, sort: 'PRICE_PER_SQFT' })],
    ['no fee by price (a yes/no filter, migration 017)', () => search({ noFee: true, sort: 'PRICE', sortDir: 'ASC', page: 2 })],
    ['two amenities by listing date', () => search({ amenities: ['ELEVATOR', 'DOORMAN'], sort: 'LISTED_AT', page: 2, perPage: 20 })],
  ])('%s: the planner, a walk and a sort give the same rows', async (_name, make) => {
    const s = make();
    const byPlanner = await searchListings(db, s, ctx());
    expect(byPlanner.rows.length).toBeGreaterThan(0);
    expect(await searchListings(db, s, ctx(SORT_ALWAYS))).toEqual(byPlanner);
    expect(await searchListings(db, s, ctx(NEVER_SORT))).toEqual(byPlanner);
  });

  it('a sort reads the matches through a filter index and sorts them; a walk reads the order index only', async () => {
    const s = search({ areaIds: queens(), minBeds: 1, sort: 'PRICE', sortDir: 'ASC' });
    expect(pageStrategy(s, 100, SORT_ALWAYS)).toBe('sort');
    statements.length = 0;
    await searchListings(db, s, ctx(SORT_ALWAYS), 100);
    expect(statements).toHaveLength(1);
    expect(statements[0].sql).toContain('order by +"price" asc, +"id" asc');
    expect(plan(statements[0])).toContain('USE TEMP B-TREE FOR ORDER BY');
    expect(plan(statements[0])).not.toContain('listings_price ');

    expect(pageStrategy(s, 100, NEVER_SORT)).toBe('walk');
    statements.length = 0;
    await searchListings(db, s, ctx(NEVER_SORT), 100);
    expect(statements[0].sql).toContain('from "listings" indexed by "listings_price"');
    expect(plan(statements[0])).toMatch(/^SEARCH listings USING INDEX listings_price \(kind=\? AND status=\?\)$/);
  });

  it('an amenity search reads the listings with the amenity from its index and each by id, not every listing of the kind', async () => {
    const active = sqlite.prepare("select count(*) from listings where kind = 'rental' and status = 'ACTIVE'").pluck().get() as number;
    const withDoorman = sqlite
      .prepare("select count(*) from listings l join listing_amenities a on a.listing_id = l.id where a.amenity = 'DOORMAN' and l.kind = 'rental' and l.status = 'ACTIVE'")
      .pluck()
      .get() as number;
    expect(withDoorman).toBeGreaterThan(50);
    for (const sort of ['RECOMMENDED', 'PRICE'] as const) {
      statements.length = 0;
      const { total } = await searchListings(db, search({ amenities: ['DOORMAN'], sort, page: 2, perPage: 20 }), ctx(active));
      expect(total).toBe(withDoorman);
      // The count, then the page.
      expect(statements).toHaveLength(2);
      for (const statement of statements) {
        expect(plan(statement)).toContain('USING COVERING INDEX listing_amenities_amenity (amenity=?)');
        expect(plan(statement)).toContain('SEARCH listings USING INDEX sqlite_autoindex_listings_1 (id=?)');
      }
    }
  });

  it('an amenity page the planner reads walks the order index, testing each entry against the amenity\'s set; the rows are the sort\'s', async () => {
    for (const [sort, index] of [['RECOMMENDED', 'listings_recommended'], ['PRICE', 'listings_price'], ['LISTED_AT', 'listings_listed_at']] as const) {
      const s = search({ amenities: ['DOORMAN'], sort, sortDir: 'ASC', page: 2, perPage: 20 });
      const { total } = await searchListings(db, s, ctx(SORT_ALWAYS));
      expect(pageStrategy(s, total, NEVER_SORT), sort).toBe('planner');
      statements.length = 0;
      const walked = await searchListings(db, s, ctx(NEVER_SORT), total);
      expect(statements, sort).toHaveLength(1);
      expect(statements[0].sql).toContain(') is true');
      const read = plan(statements[0]);
      expect(read, sort).toContain(`SEARCH listings USING INDEX ${index} (kind=? AND status=?)`);
      expect(read, sort).toContain('LIST SUBQUERY');
      expect(read, sort).not.toContain('sqlite_autoindex_listings_1 (id=?)');
      // No sort of the matches (ties of the default order's leading key may still be sorted: LAST 2 TERMS).
      expect(read, sort).not.toContain('USE TEMP B-TREE FOR ORDER BY');
      expect(walked.rows.length, sort).toBe(20);
      expect(walked, sort).toEqual(await searchListings(db, s, ctx(SORT_ALWAYS), total));
    }
  });

  it('every filter counted as held by an order index is tested on its entries: a walk reads no filter column from the table', async () => {
    // The column each filter tests, and a value that some rentals match.
    const filters: Record<string, [Partial<ListingSearch>, string][]> = {
      areaIds: [[{ areaIds: queens() }, 'area_id']],
      minBeds: [[{ minBeds: 1 }, 'bedroom_count']],
      maxBeds: [[{ maxBeds: 3 }, 'bedroom_count']],
      minPrice: [[{ minPrice: 2000 }, 'price']],
      maxPrice: [[{ maxPrice: 5000 }, 'price']],
      minDaysOnMarket: [[{ minDaysOnMarket: 1 }, 'listed_at']],
      maxDaysOnMarket: [[{ maxDaysOnMarket: 10_000 }, 'listed_at']],
      listedAfter: [[{ listedAfter: '2000-01-01T00:00:00Z' }, 'listed_at']],
      listedBefore: [[{ listedBefore: '2100-01-01T00:00:00Z' }, 'listed_at']],
      minSqft: [[{ minSqft: 500 }, 'sqft']],
      maxSqft: [[{ maxSqft: 2000 }, 'sqft']],
      // Both sides: no (unknown or 0) and yes, written `+no_fee = 1` when a page is not read through its partial index.
      noFee: [
        [{ noFee: false }, 'no_fee'],
        [{ noFee: true }, 'no_fee'],
      ],
    };
    const columns = sqlite.prepare("select name from pragma_table_info('listings')").pluck().all() as string[];
    const tableRoot = sqlite.prepare("select rootpage from sqlite_master where type = 'table' and name = 'listings'").pluck().get();
    for (const [sort, held] of Object.entries(HELD_BY_ORDER_INDEX) as [IndexedSort, ReadonlySet<string>][]) {
      for (const [filter, column] of [...held].flatMap((name) => filters[name])) {
        const name = JSON.stringify(filter);
        const s = search({ ...filter, sort });
        expect(pageStrategy(s, rentals.length, NEVER_SORT), `${sort} ${name}`).toBe('walk');
        statements.length = 0;
        const { rows } = await searchListings(db, s, ctx(NEVER_SORT), rentals.length);
        expect(rows.length, `${sort} ${name}`).toBeGreaterThan(0);
        const page = statements[0];
        expect(page.sql).toContain(`indexed by "${SORTS[sort].index}"`);
        const program = sqlite.prepare(`explain ${page.sql}`).all(...(page.parameters as unknown[])) as { opcode: string; p1: number; p2: number }[];
        const tableCursors = program.filter((op) => op.opcode === 'OpenRead' && op.p2 === tableRoot).map((op) => op.p1);
        const readFromTable = program.filter((op) => op.opcode === 'Column' && tableCursors.includes(op.p1)).map((op) => columns[op.p2]);
        expect(readFromTable, `${sort} ${name}`).not.toContain(column);
      }
    }
  });

  it('the count of a maximum monthly cost is read from the price index alone (migration 020)', async () => {
    const s = search({ kind: 'sale', maxMonthlyCost: 6000, sort: 'PRICE', sortDir: 'ASC' });
    statements.length = 0;
    const { total } = await searchListings(db, s, ctx());
    // The same count over the table itself, no index used.
    const byTable = sqlite
      .prepare("select count(*) from listings not indexed where kind = 'sale' and status = 'ACTIVE' and price * 0.005 + monthly_charges <= 6000")
      .pluck()
      .get();
    expect(total).toBe(byTable);
    expect(total).toBeGreaterThan(0);
    const count = statements[0];
    expect(count.sql).toMatch(/^select count\(\*\)/);
    expect(plan(count)).toContain('USING COVERING INDEX listings_price');
  });

  it('a yes/no filter is counted through its partial index, and a page read through it only when its matches are few (migration 017)', async () => {
    const noFee = rentals.filter((r) => r.no_fee === '1');
    expect(noFee.length).toBeGreaterThan(50);
    const s = search({ noFee: true, sort: 'PRICE', sortDir: 'ASC' });
    // Few: the count and the page both read the index of the rentals with no fee; the page is sorted.
    statements.length = 0;
    const few = await searchListings(db, s, ctx(SORT_ALWAYS));
    expect(few.total).toBe(noFee.length);
    expect(few.rows.map((r) => r.id)).toEqual(
      [...noFee].sort((a, b) => Number(a.rent) - Number(b.rent) || (a.rental_id < b.rental_id ? -1 : 1)).slice(0, 50).map((r) => r.rental_id),
    );
    const [count, sorted] = statements;
    expect(count.sql).toMatch(/^select count\(\*\)/);
    expect(count.sql).toContain('"no_fee" = 1');
    expect(plan(count)).toContain('USING COVERING INDEX listings_no_fee_yes');
    expect(plan(sorted)).toContain('USING INDEX listings_no_fee_yes');
    expect(plan(sorted)).toContain('USE TEMP B-TREE FOR ORDER BY');
    // Many: the page is read in the order's index, the flag tested on the rows (`+no_fee`), never through its index.
    statements.length = 0;
    await searchListings(db, s, ctx(NEVER_SORT), noFee.length);
    expect(statements).toHaveLength(1);
    expect(statements[0].sql).toContain('+"no_fee" = 1');
    expect(plan(statements[0])).not.toContain('listings_no_fee_yes');
    expect(plan(statements[0])).not.toContain('TEMP B-TREE');
  });

  it('a walk is left to the planner when a filter needs the row, and never taken for the geography or distance', () => {
    expect(pageStrategy(search({ minBeds: 1, minBaths: 1, sort: 'PRICE' }), 100, NEVER_SORT)).toBe('planner');
    expect(pageStrategy(search({ minSqft: 500, sort: 'PRICE' }), 100, NEVER_SORT)).toBe('planner');
    expect(pageStrategy(search({}), 100, NEVER_SORT)).toBe('planner');
    expect(pageStrategy(search({ minBeds: 1, bbox: [-74, 40.7, -73.9, 40.8] }), 100, NEVER_SORT)).toBe('planner');
    expect(pageStrategy(search({ minBeds: 1, near: { latitude: 40.7, longitude: -73.9, radius: 500 }, sort: 'DISTANCE' }), 100, SORT_ALWAYS)).toBe('planner');
    expect(pageStrategy(search({ minBeds: 1 }), 100, undefined)).toBe('planner');
  });

  it('few matches are sorted and many walked, by the total against the listings of the kind', () => {
    // 50 rows a page of 1,000 listings: a walk passes 50 x 1,000 / total entries, a sort visits total.
    const needsRow = search({ minBaths: 1, sort: 'PRICE' });
    expect(pageStrategy(needsRow, 223, 1000)).toBe('sort'); // 223^2 = 49,729 <= 50,000
    expect(pageStrategy(needsRow, 224, 1000)).toBe('planner');
    // Deeper pages make a walk longer: page 3 of 50 passes 150 x 1,000 / total.
    expect(pageStrategy({ ...needsRow, page: 3 }, 387, 1000)).toBe('sort');
    // An entry that holds every filter costs a twentieth of a sorted match: 50^2 <= 50 x 1,000 / 20.
    const held = search({ minBeds: 1, sort: 'PRICE' });
    expect(pageStrategy(held, 50, 1000)).toBe('sort');
    expect(pageStrategy(held, 51, 1000)).toBe('walk');
  });

  it('a page past the last match reads nothing: only the count runs, and the answer is empty', async () => {
    // No sale asks less than the cheapest one; the source rows say so.
    const cheapest = Math.min(...sales.map((r) => r.price));
    expect(sales.length).toBeGreaterThan(0);
    const s = search({ kind: 'sale', maxPrice: cheapest - 1, sort: 'LISTED_AT' });
    statements.length = 0;
    expect(await searchListings(db, s, ctx(sales.length))).toEqual({ total: 0, rows: [] });
    expect(statements.map((q) => q.sql)).toEqual([expect.stringMatching(/^select count\(\*\)/)]);
    // Past the end of the rentals: total known, so no statement at all.
    const pages = Math.ceil(rentals.length / 50);
    statements.length = 0;
    expect(await searchListings(db, search({ page: pages + 1 }), ctx(rentals.length), rentals.length)).toEqual({ total: rentals.length, rows: [] });
    expect(statements).toEqual([]);
    expect(pageStrategy(search({ page: pages }), rentals.length, rentals.length)).not.toBe('empty');
  });
});
