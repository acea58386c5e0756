import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SEARCH_FILTER_NAMES } from '../../src/domain/search-filters.js';
import { applyFilters, FILTER_NAMES, FILTERS, filtersOf, HELD_BY_ORDER_INDEX, RANGES, YES_NO_FILTERS, type FilterContext } from '../../src/search/filters.js';
import type { ListingSearch } from '../../src/search/listing-search.js';
import { pageStrategy, planPage } from '../../src/search/plan.js';
import { INDEXED_SORTS, SORT_FIELDS, SORTS } from '../../src/search/sorts.js';
import type { Database } from '../../src/store/schema.js';

// The table of filters and the plan, compiled without a database (Kysely's compile-only driver): each
// filter's SQL and parameters, and which way a page is read. The rows they select are tested end to end
// in test/search/search-filters.test.ts against the source rows.
const compileOnly = (dialect: 'sqlite' | 'postgres') =>
  new Kysely<Database>({
    dialect:
      dialect === 'sqlite'
        ? { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new SqliteIntrospector(db), createQueryCompiler: () => new SqliteQueryCompiler() }
        : { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() },
  });
const NOW = new Date('2026-11-24T12:00:00.000Z');
const ctx = (over: Partial<FilterContext> = {}): FilterContext => ({ now: NOW, mortgageFactor: 0.005, dialect: 'sqlite', flagsByIndex: true, amenitiesAsSet: false, ...over });
const search = (over: Partial<ListingSearch>): ListingSearch => ({ kind: 'rental', sort: 'RECOMMENDED', sortDir: 'DESC', page: 1, perPage: 50, ...over });

/** The WHERE clause a search's filters compile to after `kind` and `status`, with its parameters after theirs. */
function where(over: Partial<ListingSearch>, context = ctx()) {
  const base = compileOnly(context.dialect).selectFrom('listings').selectAll().where('kind', '=', 'rental').where('status', '=', 'ACTIVE');
  const { sql, parameters } = applyFilters(base, search(over), context).compile();
  return { sql: sql.replace(/^select \* from "listings" where "kind" = [?$1]+ and "status" = [?$2]+ ?(and )?/, ''), parameters: parameters.slice(2) };
}

describe('the table of filters', () => {
  it('has a row for every filter of the wire, and for each filter the route resolves', () => {
    expect(FILTER_NAMES).toEqual(expect.arrayContaining(SEARCH_FILTER_NAMES));
    expect(FILTER_NAMES.filter((name) => !(SEARCH_FILTER_NAMES as string[]).includes(name)).sort()).toEqual(['amenities', 'areaIds', 'bbox', 'buildingTypes', 'communityDistrict', 'ids', 'near', 'policePrecinct', 'schoolDistrict']);
  });

  it.each([
    ['areaIds', [300, 301], '"area_id" in (?, ?)', [300, 301]],
    ['areaIds', [], '"area_id" in (?)', [-1]],
    ['minPrice', 1000, '"price" >= ?', [1000]],
    ['maxPrice', 2000, '"price" <= ?', [2000]],
    ['minBeds', 0, '"bedroom_count" >= ?', [0]],
    ['maxBeds', 2, '"bedroom_count" <= ?', [2]],
    ['minBaths', 1, '"full_bathroom_count" >= ?', [1]],
    ['maxBaths', 3, '"full_bathroom_count" <= ?', [3]],
    ['minSqft', 500, '"sqft" >= ?', [500]],
    ['maxSqft', 900, '"sqft" <= ?', [900]],
    ['amenities', ['GYM', 'GYM', 'DOORMAN'], '"listings"."id" in (select "listing_amenities"."listing_id" from "listing_amenities" where "listing_amenities"."amenity" = ?) and "listings"."id" in (select "listing_amenities"."listing_id" from "listing_amenities" where "listing_amenities"."amenity" = ?)', ['GYM', 'DOORMAN']],
    ['noFee', true, '"no_fee" = 1', []],
    ['noFee', false, '("no_fee" is null or "no_fee" = ?)', [0]],
    ['petsAllowed', true, '"pets_allowed" = 1', []],
    ['has3dTour', false, '("has_3d_tour" is null or "has_3d_tour" = ?)', [0]],
    ['furnished', true, '"furnished" = 1', []],
    ['buildingTypes', ['HOUSE', 'MULTIFAMILY'], '"building_type" in (?, ?)', ['HOUSE', 'MULTIFAMILY']],
    ['buildingTypes', [], '', []],
    ['prewar', true, '"year_built" < ?', [1940]],
    ['prewar', false, '("year_built" is null or "year_built" >= ?)', [1940]],
    ['saleType', 'RESALE', '"sale_type" = ?', ['RESALE']],
    ['minDaysOnMarket', 3, '"listed_at" <= ?', ['2026-11-21T12:00:00.000Z']],
    ['maxDaysOnMarket', 3, '"listed_at" > ?', ['2026-11-20T12:00:00.000Z']],
    ['listedAfter', '2026-11-01T00:00:00.000Z', '"listed_at" > ?', ['2026-11-01T00:00:00.000Z']],
    ['listedBefore', '2026-11-01T00:00:00.000Z', '"listed_at" < ?', ['2026-11-01T00:00:00.000Z']],
    ['hasOpenHouse', true, 'coalesce(open_house_end, open_house_start) > ?', [NOW.toISOString()]],
    ['hasOpenHouse', false, '(coalesce(open_house_end, open_house_start) is null or coalesce(open_house_end, open_house_start) <= ?)', [NOW.toISOString(), NOW.toISOString()].slice(1)],
    ['maxMonthlyCost', 4000, 'price * cast(? as double precision) + monthly_charges <= ?', [0.005, 4000]],
    ['minTransitScore', 80, '"transit_score" >= ?', [80]],
    ['availableBefore', '2026-12-01', '"available_at" <= ?', ['2026-12-01']],
    ['communityDistrict', [105, 106], '"community_district" in (?, ?)', [105, 106]],
    ['policePrecinct', [13], '"police_precinct" in (?)', [13]],
    ['schoolDistrict', [], '"school_district" in (?)', [-1]],
    ['ids', ['1545', '2011'], '"id" in (?, ?)', ['1545', '2011']],
    ['ids', [], '"id" in (?)', ['']],
  ] as const)('%s = %j: %s', (name, value, sql, parameters) => {
    expect(where({ [name]: value })).toEqual({ sql, parameters });
  });

  it('an amenity as a set (the planner\'s page): (id in (...)) is true, which neither database turns into a join', () => {
    expect(where({ amenities: ['DOORMAN'] }, ctx({ amenitiesAsSet: true }))).toEqual({
      sql: '("listings"."id" in (select "listing_amenities"."listing_id" from "listing_amenities" where "listing_amenities"."amenity" = ?)) is true',
      parameters: ['DOORMAN'],
    });
    expect(where({ amenities: ['DOORMAN'] }, ctx({ dialect: 'postgres', amenitiesAsSet: true }))).toEqual({
      sql: '("listings"."id" in (select "listing_amenities"."listing_id" from "listing_amenities" where "listing_amenities"."amenity" = $3)) is true',
      parameters: ['DOORMAN'],
    });
  });

  it('a yes read past its partial index is +column = 1, which no index serves', () => {
    expect(where({ noFee: true }, ctx({ flagsByIndex: false })).sql).toBe('+"no_fee" = 1');
  });

  it('a box: the spatial index (R*Tree on SQLite, GiST on PostgreSQL), then the exact test, edges included', () => {
    const box = [-74, 40.7, -73.9, 40.8] as [number, number, number, number];
    expect(where({ bbox: box })).toEqual({
      sql: 'listings.rowid in (select id from listings_rtree where max_lat >= ? and min_lat <= ? and max_lon >= ? and min_lon <= ?) and "latitude" >= ? and "latitude" <= ? and "longitude" >= ? and "longitude" <= ?',
      parameters: [40.7, 40.8, -74, -73.9, 40.7, 40.8, -74, -73.9],
    });
    expect(where({ bbox: box }, ctx({ dialect: 'postgres' })).sql).toMatch(/^point\(longitude, latitude\) <@ box\(point\(cast\(\$3 as double precision\)/);
  });

  it('a radius: the box around it through the spatial index, then the great-circle distance', () => {
    const { sql, parameters } = where({ near: { latitude: 40.75, longitude: -73.98, radius: 500 } });
    expect(sql).toMatch(/^listings\.rowid in \(select id from listings_rtree .*\) and .* and \(\? \* 2 \* asin\(sqrt\(.*\)\)\) <= \?$/);
    expect(parameters.slice(-5)).toEqual([6_371_000, 40.75, 40.75, -73.98, 500]);
  });

  it('filters are written in the table\'s order, whatever order the search gives them in', () => {
    expect(where({ maxPrice: 2000, areaIds: [300], minBeds: 1 }).sql).toBe('"area_id" in (?) and "price" <= ? and "bedroom_count" >= ?');
    expect(filtersOf(search({ maxPrice: 2000, areaIds: [300], noFee: undefined }))).toEqual([
      ['areaIds', [300]],
      ['maxPrice', 2000],
    ]);
  });

  it('derives the ranges, the yes/no filters and what each order\'s index holds', () => {
    expect(RANGES).toEqual([
      ['minPrice', 'maxPrice'],
      ['minBeds', 'maxBeds'],
      ['minBaths', 'maxBaths'],
      ['minSqft', 'maxSqft'],
      ['minDaysOnMarket', 'maxDaysOnMarket'],
    ]);
    expect(YES_NO_FILTERS).toEqual(['petsAllowed', 'has3dTour', 'noFee', 'furnished']);
    expect(Object.fromEntries(INDEXED_SORTS.map((sort) => [sort, [...HELD_BY_ORDER_INDEX[sort]]]))).toEqual({
      RECOMMENDED: ['areaIds', 'minPrice', 'maxPrice', 'minBeds', 'maxBeds', 'noFee', 'minDaysOnMarket', 'maxDaysOnMarket', 'listedAfter', 'listedBefore'],
      PRICE: ['areaIds', 'minPrice', 'maxPrice', 'minBeds', 'maxBeds'],
      LISTED_AT: ['areaIds', 'minPrice', 'maxPrice', 'minBeds', 'maxBeds', 'minDaysOnMarket', 'maxDaysOnMarket', 'listedAfter', 'listedBefore'],
      PRICE_PER_SQFT: ['areaIds', 'minPrice', 'maxPrice', 'minBeds', 'maxBeds', 'minSqft', 'maxSqft'],
    });
    expect(FILTER_NAMES.filter((name) => FILTERS[name].countedInMemory)).toEqual(['areaIds', 'minPrice', 'maxPrice', 'minBeds', 'maxBeds']);
  });
});

describe('the table of sorts', () => {
  it('every sort but DISTANCE has an index and a keyset', () => {
    expect(SORT_FIELDS).toEqual(['RECOMMENDED', 'PRICE', 'LISTED_AT', 'PRICE_PER_SQFT', 'DISTANCE']);
    expect(INDEXED_SORTS).toEqual(['RECOMMENDED', 'PRICE', 'LISTED_AT', 'PRICE_PER_SQFT']);
    for (const sort of INDEXED_SORTS) expect(SORTS[sort].keyset.length).toBeGreaterThan(0);
  });
});

describe('how a page is read (the plan)', () => {
  const rentals = 50_000;
  it.each([
    ['past the last match', { page: 3, perPage: 50 }, 100, 'empty'],
    ['no total known of the kind', {}, 100, 'planner', 'unknown'],
    ['a box', { bbox: [-74, 40.7, -73.9, 40.8] }, 100, 'planner'],
    ['ids', { ids: ['1'] }, 100, 'planner'],
    ['DISTANCE', { sort: 'DISTANCE', near: { latitude: 40.7, longitude: -74, radius: 100 } }, 100, 'planner'],
    ['few matches: sort them', { areaIds: [300], minBeds: 2 }, 40, 'sort'],
    ['many matches the order\'s index holds: walk it', { areaIds: [300], minBeds: 2 }, 20_000, 'walk'],
    ['many matches of a filter no index holds: the planner', { minBaths: 2 }, 20_000, 'planner'],
    ['no filter at all: the planner', {}, 50_000, 'planner'],
    ['a price range by price: walk the price index', { sort: 'PRICE', minPrice: 1000, maxPrice: 3000 }, 20_000, 'walk'],
    ['a price range by listing date: walk the date index, which holds the price (migration 024)', { sort: 'LISTED_AT', minPrice: 1000 }, 20_000, 'walk'],
    ['a price range with a monthly cost by listing date: the planner', { sort: 'LISTED_AT', minPrice: 1000, maxMonthlyCost: 5000 }, 20_000, 'planner'],
    ['a cursor past every row is still read', { after: { keys: [1], id: '1' }, page: 9 }, 10, 'sort'],
  ] as const)('%s: %s', (_what, over, total, expected, activeOfKind: 'unknown' | undefined = undefined) => {
    expect(pageStrategy(search(over as Partial<ListingSearch>), total, activeOfKind === 'unknown' ? undefined : rentals)).toBe(expected);
  });

  it('weighs a walk by the entries the price ladders say it passes, asked only when they can make a sort the cheaper', () => {
    const inArea = search({ areaIds: [300], minBeds: 2 });
    // 1,000 matches spread evenly: the first 50 lie within 2,500 entries, which cost less than sorting them all.
    expect(pageStrategy(inArea, 1000, rentals)).toBe('walk');
    // Bunched far down the order: 40,000 entries to pass cost more (a 20th of a sorted match each: 2,000 matches).
    expect(pageStrategy(inArea, 1000, rentals, () => 40_000)).toBe('sort');
    expect(pageStrategy(inArea, 1000, rentals, () => 19_999)).toBe('walk');
    expect(pageStrategy(inArea, 2000, rentals, () => 40_000)).toBe('sort');
    // Past a 20th of the kind's listings even a walk through all of them is the cheaper: the estimate is not asked.
    const never = () => {
      throw new Error('asked');
    };
    expect(pageStrategy(inArea, rentals / 20 + 1, rentals, never)).toBe('walk');
    // The tests' way to force a walk (no listing of the kind known) holds with an estimate at hand.
    expect(pageStrategy(inArea, 10, 0, never)).toBe('walk');
  });
});

describe('the plan of a page', () => {
  const context = (dialect: 'sqlite' | 'postgres') => ({ now: NOW, mortgageFactor: 0.005, dialect, activeOfKind: 50_000 });
  it.each([
    ['a yes filter, few matches: sorted, through its partial index', { noFee: true }, 40, 'sqlite', { read: 'sort', flagsByIndex: true, idsFirst: false, amenitiesAsSet: false, orderBounds: [] }],
    ['a yes filter, many matches: not through its partial index', { noFee: true }, 20_000, 'sqlite', { read: 'walk', flagsByIndex: false, idsFirst: false, amenitiesAsSet: false, orderBounds: [] }],
    ['a walk on PostgreSQL reads the page\'s ids first', { areaIds: [300] }, 20_000, 'postgres', { read: 'walk', flagsByIndex: true, idsFirst: true, amenitiesAsSet: false, orderBounds: [] }],
    ['a walk on SQLite reads through INDEXED BY', { areaIds: [300] }, 20_000, 'sqlite', { read: 'walk', flagsByIndex: true, idsFirst: false, amenitiesAsSet: false, orderBounds: [] }],
    ['nothing to read', { page: 3 }, 10, 'postgres', { read: 'empty', flagsByIndex: true, idsFirst: false, amenitiesAsSet: false, orderBounds: [] }],
    ['an amenity, many matches, on PostgreSQL: its ids first, each entry of the order\'s index tested against the amenity\'s set', { amenities: ['DOORMAN'] }, 20_000, 'postgres', { read: 'planner', flagsByIndex: true, idsFirst: true, amenitiesAsSet: true, orderBounds: [] }],
    ['an amenity near a point, on PostgreSQL: the spatial index drives, the amenity joined', { amenities: ['DOORMAN'], near: { latitude: 40.7, longitude: -74, radius: 500 } }, 20_000, 'postgres', { read: 'planner', flagsByIndex: true, idsFirst: false, amenitiesAsSet: false, orderBounds: [] }],
    ['an amenity, few matches, on PostgreSQL: sorted, the amenity\'s listings driving', { amenities: ['DOORMAN'] }, 40, 'postgres', { read: 'sort', flagsByIndex: true, idsFirst: false, amenitiesAsSet: false, orderBounds: [] }],
    ['an amenity, many matches, on SQLite: each entry of the order\'s index tested against the amenity\'s set, no ids first', { amenities: ['DOORMAN'] }, 20_000, 'sqlite', { read: 'planner', flagsByIndex: true, idsFirst: false, amenitiesAsSet: true, orderBounds: [] }],
    ['an amenity, few matches, on SQLite: sorted, the amenity\'s listings driving', { amenities: ['DOORMAN'] }, 40, 'sqlite', { read: 'sort', flagsByIndex: true, idsFirst: false, amenitiesAsSet: false, orderBounds: [] }],
  ] as const)('%s', (_what, over, total, dialect, expected) => {
    expect(planPage(search(over as Partial<ListingSearch>), total, context(dialect))).toEqual({ total, ...expected });
  });

  // The bounds a filter implies on the order's leading key: each must keep every match, so the test checks
  // them against the rules they come from (a sale's monthly cost is price x factor + charges, charges never
  // negative; the recommended score is round(0.6 x transit score) + parts never negative).
  const bounds = (over: Partial<ListingSearch>, mortgageFactor = 0.005) => planPage(search({ kind: 'sale', ...over }), 20_000, { ...context('sqlite'), mortgageFactor }).orderBounds;
  it('a maximum monthly cost by price: the highest price whose payment alone fits', () => {
    for (const [maxMonthlyCost, factor] of [[3000, 0.005], [4321, 0.0061], [1, 0.0049]]) {
      const [bound, ...rest] = bounds({ sort: 'PRICE', maxMonthlyCost }, factor);
      expect(rest).toEqual([]);
      expect(bound).toMatchObject({ column: 'price', op: '<=' });
      expect(bound.value! * factor).toBeLessThanOrEqual(maxMonthlyCost * (1 + 1e-9));
      expect((bound.value! + 1) * factor).toBeGreaterThan(maxMonthlyCost);
    }
    expect(bounds({ sort: 'PRICE', maxMonthlyCost: 3000 }, 0)).toEqual([]);
    expect(bounds({ sort: 'LISTED_AT', maxMonthlyCost: 3000 })).toEqual([]);
  });
  it('a minimum transit score in the default order: the lowest score such a listing can have', () => {
    for (const minTransitScore of [0, 1, 74, 75, 100]) {
      expect(bounds({ minTransitScore })).toEqual([{ column: 'recommended_score', op: '>=', value: Math.round(0.6 * minTransitScore) }]);
    }
    expect(bounds({ minTransitScore: 75, sort: 'PRICE' })).toEqual([]);
  });
  it('a size above zero by price per square foot: known prices per square foot only', () => {
    expect(bounds({ sort: 'PRICE_PER_SQFT', minSqft: 500 })).toEqual([{ column: 'price_per_sqft', op: 'is not', value: null }]);
    expect(bounds({ sort: 'PRICE_PER_SQFT', minSqft: 0 })).toEqual([]);
    expect(bounds({ sort: 'DISTANCE', near: { latitude: 40.7, longitude: -74, radius: 100 }, minSqft: 500, minTransitScore: 75 })).toEqual([]);
  });
});
