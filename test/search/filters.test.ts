import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { describe, expect, it } from 'vitest';
import { SEARCH_FILTER_NAMES } from '../../src/domain/search-filters.js';
import { applyFilters, FILTER_NAMES, filtersOf, RANGES } from '../../src/search/filters.js';
import type { ListingSearch, SearchContext } from '../../src/search/listing-search.js';
import { INDEXED_SORTS, SORT_FIELDS, SORTS } from '../../src/search/sorts.js';
import type { Database } from '../../src/store/schema.js';

// The table of filters, compiled without a database (Kysely's compile-only driver): each filter's SQL and
// parameters. The rows they select are tested end to end
// in test/search/search-filters.test.ts against the source rows.
const compileOnly = (dialect: 'sqlite' | 'postgres') =>
  new Kysely<Database>({
    dialect:
      dialect === 'sqlite'
        ? {
            createAdapter: () => new SqliteAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new SqliteIntrospector(db),
            createQueryCompiler: () => new SqliteQueryCompiler(),
          }
        : {
            createAdapter: () => new PostgresAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new PostgresIntrospector(db),
            createQueryCompiler: () => new PostgresQueryCompiler(),
          },
  });
const NOW = new Date('2026-11-24T12:00:00.000Z');
const ctx = (over: Partial<SearchContext> = {}): SearchContext => ({ now: NOW, mortgageFactor: 0.005, dialect: 'sqlite', ...over });
const search = (over: Partial<ListingSearch>): ListingSearch => ({
  kind: 'rental',
  sort: 'RECOMMENDED',
  sortDir: 'DESC',
  page: 1,
  perPage: 50,
  ...over,
});

/** The WHERE clause a search's filters compile to after `kind` and `status`, with its parameters after theirs. */
function where(over: Partial<ListingSearch>, context = ctx()) {
  const base = compileOnly(context.dialect).selectFrom('listings').selectAll().where('kind', '=', 'rental').where('status', '=', 'ACTIVE');
  const { sql, parameters } = applyFilters(base, search(over), context).compile();
  return {
    sql: sql.replace(/^select \* from "listings" where "kind" = [?$1]+ and "status" = [?$2]+ ?(and )?/, ''),
    parameters: parameters.slice(2),
  };
}

describe('the table of filters', () => {
  it('has a row for every filter of the wire, and for each filter the route resolves', () => {
    expect(FILTER_NAMES).toEqual(expect.arrayContaining(SEARCH_FILTER_NAMES));
    expect(FILTER_NAMES.filter((name) => !(SEARCH_FILTER_NAMES as string[]).includes(name)).sort()).toEqual([
      'amenities',
      'areaIds',
      'bbox',
      'buildingTypes',
      'communityDistrict',
      'ids',
      'near',
      'policePrecinct',
      'schoolDistrict',
    ]);
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
    [
      'amenities',
      ['GYM', 'GYM', 'DOORMAN'],
      '"listings"."id" in (select "listing_amenities"."listing_id" from "listing_amenities" where "listing_amenities"."amenity" = ?) and "listings"."id" in (select "listing_amenities"."listing_id" from "listing_amenities" where "listing_amenities"."amenity" = ?)',
      ['GYM', 'DOORMAN'],
    ],
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
    [
      'hasOpenHouse',
      false,
      '(coalesce(open_house_end, open_house_start) is null or coalesce(open_house_end, open_house_start) <= ?)',
      [NOW.toISOString(), NOW.toISOString()].slice(1),
    ],
    ['maxMonthlyCost', 4000, 'price * cast(? as double precision) + monthly_charges <= ?', [0.005, 4000]],
    ['minTransitScore', 80, '"transit_score" >= ?', [80]],
    ['maxPricePosition', -5, '"price_position" <= ?', [-5]],
    ['availableBefore', '2026-12-01', '"available_at" <= ?', ['2026-12-01']],
    ['communityDistrict', [105, 106], '"community_district" in (?, ?)', [105, 106]],
    ['policePrecinct', [13], '"police_precinct" in (?)', [13]],
    ['schoolDistrict', [], '"school_district" in (?)', [-1]],
    ['ids', ['1545', '2011'], '"id" in (select value from json_each(?))', ['["1545","2011"]']],
    ['ids', [], '"id" in (select value from json_each(?))', ['[]']],
  ] as const)('%s = %j: %s', (name, value, sql, parameters) => {
    expect(where({ [name]: value })).toEqual({ sql, parameters });
  });

  it('a box: the spatial index (R*Tree on SQLite, GiST on PostgreSQL), then the exact test, edges included', () => {
    const box = [-74, 40.7, -73.9, 40.8] as [number, number, number, number];
    expect(where({ bbox: box })).toEqual({
      sql: 'listings.rowid in (select id from listings_rtree where max_lat >= ? and min_lat <= ? and max_lon >= ? and min_lon <= ?) and "latitude" >= ? and "latitude" <= ? and "longitude" >= ? and "longitude" <= ?',
      parameters: [40.7, 40.8, -74, -73.9, 40.7, 40.8, -74, -73.9],
    });
    expect(where({ bbox: box }, ctx({ dialect: 'postgres' })).sql).toMatch(
      /^point\(longitude, latitude\) <@ box\(point\(cast\(\$3 as double precision\)/,
    );
  });

  it('a radius: the box around it through the spatial index, then the great-circle distance rounded to the metre', () => {
    const { sql, parameters } = where({ near: { latitude: 40.75, longitude: -73.98, radius: 500 } });
    expect(sql).toMatch(
      /^listings\.rowid in \(select id from listings_rtree .*\) and .* and round\(\(\? \* 2 \* asin\(sqrt\(.*\)\)\)\) <= \?$/,
    );
    expect(parameters.slice(-5)).toEqual([6_371_000, 40.75, 40.75, -73.98, 500]);
  });

  it("filters are written in the table's order, whatever order the search gives them in", () => {
    expect(where({ maxPrice: 2000, areaIds: [300], minBeds: 1 }).sql).toBe('"area_id" in (?) and "price" <= ? and "bedroom_count" >= ?');
    expect(filtersOf(search({ maxPrice: 2000, areaIds: [300], noFee: undefined }))).toEqual([
      ['areaIds', [300]],
      ['maxPrice', 2000],
    ]);
  });

  it('derives the ranges', () => {
    expect(RANGES).toEqual([
      ['minPrice', 'maxPrice'],
      ['minBeds', 'maxBeds'],
      ['minBaths', 'maxBaths'],
      ['minSqft', 'maxSqft'],
      ['minDaysOnMarket', 'maxDaysOnMarket'],
    ]);
  });
});

describe('the table of sorts', () => {
  it('every sort but DISTANCE has an index and a keyset', () => {
    expect(SORT_FIELDS).toEqual(['RECOMMENDED', 'PRICE', 'LISTED_AT', 'PRICE_PER_SQFT', 'DISTANCE']);
    expect(INDEXED_SORTS).toEqual(['RECOMMENDED', 'PRICE', 'LISTED_AT', 'PRICE_PER_SQFT']);
    for (const sort of INDEXED_SORTS) expect(SORTS[sort].keyset.length).toBeGreaterThan(0);
  });
});
