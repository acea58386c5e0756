import { sql, type ExpressionBuilder } from 'kysely';
import type { DistrictName } from '../domain/city-districts.js';
import { DISTRICT_COLUMNS, type Database } from '../store/schema.js';
import { readerOf } from '../lib/narrow-arrays.js';
import { boxAround, distanceFrom, inBox, roundedDistance } from './geography.js';
import type { FilterName, ListingSearch, ListingsQuery, SearchContext } from './listing-search.js';
import { valueAt, type ListingColumns, type NumberColumn, type NumericColumn } from './listing-columns.js';
import { allOf, inBits, inRange, oneOf, passing, yesOrNo, type InMemory } from './candidate-filters.js';

const DAY_MS = 86_400_000;

/** First year of post-war construction: `prewar` means built before 1940. */
export const PREWAR_BEFORE_YEAR = 1940;

/** A yes/no column of the listings table: 1 yes, 0 no, null unknown. */
type FlagColumn = 'pets_allowed' | 'has_3d_tour' | 'no_fee' | 'furnished';

/** One row of the table of filters. */
export interface FilterRow<V> {
  /** Keeps the listings that match `value`. */
  where: (q: ListingsQuery, value: V, ctx: SearchContext) => ListingsQuery;
  /** The same filter in the search index (search-index.ts): the listings it keeps, read from the kind's columns; null when only the store answers it. */
  memory: InMemory<V>;
  /** The lower bound of a range: the filter of its upper bound (a minimum above its maximum is refused). */
  upTo?: FilterName;
}

type Numeric = 'price' | 'bedroom_count' | 'full_bathroom_count' | 'sqft' | 'transit_score' | 'price_position';
/** `column >= value`, in the store and in the index. */
const atLeast = (column: Numeric): Pick<FilterRow<number>, 'where' | 'memory'> => ({
  where: (q, value) => q.where(column, '>=', value),
  memory: (columns, value) => inRange(columns.numbers[column], value, Infinity),
});
/** `column <= value`, in the store and in the index. */
const atMost = (column: Numeric): Pick<FilterRow<number>, 'where' | 'memory'> => ({
  where: (q, value) => q.where(column, '<=', value),
  memory: (columns, value) => inRange(columns.numbers[column], -Infinity, value),
});
/** In the index, a text column compared with `text` as the store compares it (text-ranks.ts). */
const textBefore = (columns: ListingColumns, column: 'listed_at' | 'available_at', text: string, orEqual: boolean) =>
  inRange(columns.texts[column].ranks, 0, (orEqual ? columns.texts[column].atOrBelow(text) : columns.texts[column].below(text)) - 1);
const textAfter = (columns: ListingColumns, column: 'listed_at', text: string) =>
  inRange(columns.texts[column].ranks, columns.texts[column].atOrBelow(text), Infinity);

/** A yes/no filter: yes is `column = 1` (the condition of the column's partial index, migration 017), no is unknown or 0. */
function yesNo(column: FlagColumn): FilterRow<boolean> {
  return {
    memory: (columns, yes) => yesOrNo(columns.numbers[column], yes),
    where: (q, yes) => (yes ? q.where(column, '=', sql.lit(1)) : q.where((eb) => eb.or([eb(column, 'is', null), eb(column, '=', 0)]))),
  };
}

const openHouseEnd = sql<string>`coalesce(open_house_end, open_house_start)`;

/** A district filter: the listings whose stored district (the polygon holding their position, set when written) is listed. */
const inDistricts = (name: DistrictName): FilterRow<number[]> => ({
  where: (q, numbers) => q.where(DISTRICT_COLUMNS[name], 'in', numbers.length ? numbers : [-1]),
  memory: (columns, numbers) => oneOf(columns.numbers[DISTRICT_COLUMNS[name] as NumericColumn] as NumberColumn, numbers),
});

/**
 * The table of filters: every filter a search may carry, in the order its conditions are written, with its
 * SQL and its test in the search index (search-index.ts). Each search filter of the
 * wire (`SearchFilters`, domain/search-filters.ts) and each one the route resolves has a row; the compiler
 * holds the table to {@link ListingSearch}, so a filter renamed or added without its row does not build.
 * Units are the API's: dollars (rent a month), square feet, whole days, UTC instants.
 */
export const FILTERS: { [K in FilterName]-?: FilterRow<NonNullable<ListingSearch[K]>> } = {
  areaIds: {
    where: (q, ids) => q.where('area_id', 'in', ids.length ? ids : [-1]),
    // The areas' own listings are where the index starts: a neighbourhood's are a few hundred of a kind's tens of thousands.
    // So the candidate filter by area is made only if some caller asks for it.
    memory: (columns, ids) => {
      const areas = [...new Set(ids)];
      return { areas, keepMatches: (rowIds, n) => oneOf(columns.numbers.area_id, areas).keepMatches(rowIds, n) };
    },
  },
  minPrice: { upTo: 'maxPrice', ...atLeast('price') },
  maxPrice: atMost('price'),
  minBeds: { upTo: 'maxBeds', ...atLeast('bedroom_count') },
  maxBeds: atMost('bedroom_count'),
  minBaths: { upTo: 'maxBaths', ...atLeast('full_bathroom_count') },
  maxBaths: atMost('full_bathroom_count'),
  minSqft: { upTo: 'maxSqft', ...atLeast('sqft') },
  maxSqft: atMost('sqft'),
  amenities: {
    // One `id IN (listings with the amenity)` per amenity. Each amenity is on a few percent of listings at
    // most, so SQLite reads them from the amenity's index and looks each listing up by id; written as a
    // correlated EXISTS, it tested the amenity on every listing of the kind, the whole city's for a search
    // with no area.
    where: (q, amenities) =>
      [...new Set(amenities)].reduce(
        (query, amenity) =>
          query.where('listings.id', 'in', ({ selectFrom }: ExpressionBuilder<Database, 'listings'>) =>
            selectFrom('listing_amenities').select('listing_amenities.listing_id').where('listing_amenities.amenity', '=', amenity),
          ),
        q,
      ),
    memory: (columns, amenities) => allOf([...new Set(amenities)].map((amenity) => inBits(columns.amenities.get(amenity)))),
  },
  petsAllowed: yesNo('pets_allowed'),
  has3dTour: yesNo('has_3d_tour'),
  noFee: yesNo('no_fee'),
  furnished: yesNo('furnished'),
  buildingTypes: {
    where: (q, types) => (types.length ? q.where('building_type', 'in', types) : q),
    memory: (columns, types) =>
      types.length
        ? oneOf(
            columns.texts.building_type.ranks,
            types.map((t) => columns.texts.building_type.rankOf(t)),
          )
        : allOf([]),
  },
  prewar: {
    where: (q, prewar) =>
      prewar
        ? q.where('year_built', '<', PREWAR_BEFORE_YEAR)
        : q.where((eb) => eb.or([eb('year_built', 'is', null), eb('year_built', '>=', PREWAR_BEFORE_YEAR)])),
    memory: ({ numbers: { year_built: built } }, prewar) => {
      const isPrewar = (rowId: number) => {
        const year = valueAt(built, rowId);
        return year !== null && year < PREWAR_BEFORE_YEAR;
      };
      return prewar ? passing(isPrewar) : passing((rowId) => !isPrewar(rowId));
    },
  },
  saleType: {
    where: (q, saleType) => q.where('sale_type', '=', saleType),
    memory: (columns, saleType) => oneOf(columns.texts.sale_type.ranks, [columns.texts.sale_type.rankOf(saleType)]),
  },
  // Days on market = whole days since listed_at, so ">= n days" is "listed at or before now - n days".
  minDaysOnMarket: {
    upTo: 'maxDaysOnMarket',
    where: (q, days, ctx) => q.where('listed_at', '<=', new Date(ctx.now.getTime() - days * DAY_MS).toISOString()),
    memory: (columns, days, ctx) => textBefore(columns, 'listed_at', new Date(ctx.now.getTime() - days * DAY_MS).toISOString(), true),
  },
  maxDaysOnMarket: {
    where: (q, days, ctx) => q.where('listed_at', '>', new Date(ctx.now.getTime() - (days + 1) * DAY_MS).toISOString()),
    memory: (columns, days, ctx) => textAfter(columns, 'listed_at', new Date(ctx.now.getTime() - (days + 1) * DAY_MS).toISOString()),
  },
  listedAfter: {
    where: (q, instant) => q.where('listed_at', '>', instant),
    memory: (columns, instant) => textAfter(columns, 'listed_at', instant),
  },
  listedBefore: {
    where: (q, instant) => q.where('listed_at', '<', instant),
    memory: (columns, instant) => textBefore(columns, 'listed_at', instant, false),
  },
  hasOpenHouse: {
    where: (q, yes, ctx) => {
      const now = ctx.now.toISOString();
      return yes ? q.where(openHouseEnd, '>', now) : q.where((eb) => eb.or([eb(openHouseEnd, 'is', null), eb(openHouseEnd, '<=', now)]));
    },
    memory: ({ texts: { open_house_until: until } }, yes, ctx) => {
      const past = until.atOrBelow(ctx.now.toISOString());
      return yes ? inRange(until.ranks, past, Infinity) : passing((rowId) => until.ranks[rowId] < past);
    },
  },
  maxMonthlyCost: {
    where: (q, dollars, ctx) =>
      q.where(sql<number>`price * cast(${ctx.mortgageFactor} as double precision) + monthly_charges`, '<=', dollars),
    // The same arithmetic in the same order, in double precision as both stores do it.
    memory: ({ numbers: { price, monthly_charges: charges } }, dollars, ctx) =>
      passing((rowId) => price[rowId] * ctx.mortgageFactor + charges[rowId] <= dollars),
  },
  minTransitScore: atLeast('transit_score'),
  maxPricePosition: atMost('price_position'),
  availableBefore: {
    where: (q, day) => q.where('available_at', '<=', day),
    memory: (columns, day) => textBefore(columns, 'available_at', day, true),
  },
  communityDistrict: inDistricts('communityDistrict'),
  policePrecinct: inDistricts('policePrecinct'),
  schoolDistrict: inDistricts('schoolDistrict'),
  // A polygon's ids: the index tests the polygon itself instead (Searcher.find). One parameter whatever their number (a
  // polygon over two boroughs holds more listings than SQLite takes parameters in a statement: 32,766).
  ids: {
    where: (q, ids, ctx) =>
      ctx.dialect === 'postgres'
        ? q.where(sql<boolean>`${sql.ref('id')} = any(${ids}::text[])`)
        : q.where(sql<boolean>`${sql.ref('id')} in (select value from json_each(${JSON.stringify(ids)}))`),
    memory: null,
  },
  bbox: {
    where: (q, box, ctx) => inBox(q, box, ctx.dialect),
    memory: ({ numbers }, [minLon, minLat, maxLon, maxLat]) =>
      allOf([inRange(numbers.latitude, minLat, maxLat), inRange(numbers.longitude, minLon, maxLon)]),
  },
  // The listings whose great-circle distance, rounded to the metre as the answers show it (`distance`), is within the
  // radius (whole metres). Rounded, because the store's trigonometry (its C library) and V8's may differ in the last
  // place: compared exactly, a listing at the very radius could fall either side; rounded, only one within that last
  // place of a half metre could (and on PostgreSQL, whose round() takes a half to the even metre, one exactly at it).
  near: {
    where: (q, near, ctx) => inBox(q, boxAround(near), ctx.dialect).where(sql<number>`round(${distanceFrom(near)})`, '<=', near.radius),
    memory: ({ numbers }, near) => {
      const [minLon, minLat, maxLon, maxLat] = boxAround(near);
      const [latitude, longitude] = [readerOf(numbers.latitude), readerOf(numbers.longitude)];
      return allOf([
        inRange(numbers.latitude, minLat, maxLat),
        inRange(numbers.longitude, minLon, maxLon),
        passing((rowId) => roundedDistance(near, latitude(rowId), longitude(rowId)) <= near.radius),
      ]);
    },
  },
};

/** Every filter name, in the table's order. */
export const FILTER_NAMES = Object.keys(FILTERS) as FilterName[];

/** The filters a search sets (value not undefined), in the table's order: what matches, without how it is ordered or paged. */
export function filtersOf(search: ListingSearch): [FilterName, unknown][] {
  return FILTER_NAMES.filter((name) => search[name] !== undefined).map((name) => [name, search[name]]);
}

/** Keeps the active listings of the search's kind that match every filter it sets. */
export function applyFilters(q: ListingsQuery, search: ListingSearch, ctx: SearchContext): ListingsQuery {
  return filtersOf(search).reduce((query, [name, value]) => (FILTERS[name] as FilterRow<unknown>).where(query, value, ctx), q);
}

/** The ranges (lower bound, upper bound) a search may set, from the table's `upTo`. */
export const RANGES = FILTER_NAMES.flatMap((name) => (FILTERS[name].upTo ? [[name, FILTERS[name].upTo] as [FilterName, FilterName]] : []));
