import {
  RawNode,
  SelectQueryNode,
  sql,
  type ExpressionBuilder,
  type Kysely,
  type KyselyPlugin,
  type OrderByItemBuilder,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type SelectQueryBuilder,
  type UnknownRow,
} from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import { highestPriceWithin } from '../domain/monthly-cost.js';
import { lowestRecommendedScore } from '../domain/recommended-score.js';
import type { BoundingBox } from '../domain/outline.js';
import type { SearchFilters } from '../domain/search-filters.js';
import { SUMMARY_COLUMNS, type SummaryRow } from './listing-rows.js';
import type { Database } from './schema.js';

const DAY_MS = 86_400_000;

export type SortField = 'RECOMMENDED' | 'PRICE' | 'LISTED_AT' | 'PRICE_PER_SQFT' | 'DISTANCE';
export type SortDirection = 'ASC' | 'DESC';

/**
 * A validated search: the {@link SearchFilters} (the domain's one definition, in the API's terms and
 * units; instants normalised to UTC) plus what the route resolved: `areaIds` expanded to descendants,
 * comma lists split, the geography parsed, the order and the page.
 */
export type ListingSearch = SearchFilters & {
  kind: ListingKind;
  areaIds?: number[];
  /** All required. */
  amenities?: string[];
  /** Any may match. */
  buildingTypes?: string[];
  /** Listings inside this box. */
  bbox?: BoundingBox;
  /** Listings within `radius` metres of this point (great-circle); `DISTANCE` sorts by it. */
  near?: { latitude: number; longitude: number; radius: number };
  /** Only these listing ids (what a polygon search resolves to). */
  ids?: string[];
  sort: SortField;
  sortDir: SortDirection;
  page: number;
  perPage: number;
  /** Keyset pagination: the page starts after this row of the order (and `page` skips nothing). */
  after?: SearchAfter;
};

/** A position in a search's order: the sort key values of a row (nullable ones may be null) and its id. */
export interface SearchAfter {
  keys: (string | number | null)[];
  id: string;
}

/** Clock and mortgage factor (monthly payment per dollar of price) the search is evaluated with. */
export interface SearchContext {
  now: Date;
  mortgageFactor: number;
  /** PostgreSQL sorts nulls first in DESC order and must be told otherwise; SQLite already puts them last. */
  dialect: 'sqlite' | 'postgres';
  /** Active listings of the search's kind, when known: with it the search chooses how to read a page ({@link pageStrategy}). */
  activeOfKind?: number;
}

type Query = SelectQueryBuilder<Database, 'listings', object>;

/** First year of post-war construction: `prewar` means built before 1940. */
export const PREWAR_BEFORE_YEAR = 1940;

/** The yes/no filters and their columns (1 yes, 0 no, null unknown). */
const YES_NO_FILTERS = { petsAllowed: 'pets_allowed', has3dTour: 'has_3d_tour', noFee: 'no_fee', furnished: 'furnished' } as const;
type FlagColumn = (typeof YES_NO_FILTERS)[keyof typeof YES_NO_FILTERS];

/**
 * A yes/no filter. Yes is `column = 1` with the 1 written out, the condition of the column's partial
 * index (migration 017), so that a count is read from that index; or `+column = 1`, which no index
 * serves, when `byIndex` is false (see {@link searchListings}). No is unknown or 0.
 */
function flagFilter(q: Query, column: FlagColumn, value: boolean | undefined, byIndex: boolean): Query {
  if (value === undefined) return q;
  if (!value) return q.where((eb) => eb.or([eb(column, 'is', null), eb(column, '=', 0)]));
  return q.where(byIndex ? sql.ref(column) : sql`+${sql.ref(column)}`, '=', sql.lit(1));
}

/** Whether a search asks for the yes side of a yes/no filter (one that a partial index serves). */
const asksYes = (s: ListingSearch) => Object.keys(YES_NO_FILTERS).some((name) => s[name as keyof typeof YES_NO_FILTERS] === true);

/** A yes/no filter by its name in a search (`noFee`, `petsAllowed`, `has3dTour`, `furnished`). */
export type YesNoFilter = keyof typeof YES_NO_FILTERS;

/**
 * The first yes/no filter a search asks the no side of (`false`: unknown or 0), if any. Its count has no
 * index (SQLite visits every active listing of the kind), where its yes side has a partial index.
 */
export function noSideFilter(s: ListingSearch): YesNoFilter | undefined {
  return (Object.keys(YES_NO_FILTERS) as YesNoFilter[]).find((name) => s[name] === false);
}

const EARTH_RADIUS_M = 6_371_000;
const METRES_PER_DEGREE = 111_320;
const num = (v: number) => sql<number>`cast(${v} as double precision)`;

/** Great-circle distance in metres from a point to each listing's position (haversine, in SQL). */
export function distanceFrom(point: { latitude: number; longitude: number }) {
  const [lat, lon] = [num(point.latitude), num(point.longitude)];
  return sql<number>`(${EARTH_RADIUS_M} * 2 * asin(sqrt(power(sin(radians(latitude - ${lat}) / 2), 2) + cos(radians(${lat})) * cos(radians(latitude)) * power(sin(radians(longitude - ${lon}) / 2), 2))))`;
}

/** The box around a circle of `radius` metres (a little larger: the exact test follows). */
export function boxAround(near: { latitude: number; longitude: number; radius: number }): BoundingBox {
  const dLat = (near.radius / METRES_PER_DEGREE) * 1.01;
  const dLon = (near.radius / (METRES_PER_DEGREE * Math.cos((near.latitude * Math.PI) / 180))) * 1.01;
  return [near.longitude - dLon, near.latitude - dLat, near.longitude + dLon, near.latitude + dLat];
}

/**
 * Keeps listings inside `box`, through the spatial index: SQLite's R*Tree (a prefilter at 32-bit
 * precision) or PostgreSQL's GiST index on `point(longitude, latitude)`; then the exact test.
 */
function inBox(q: Query, [minLon, minLat, maxLon, maxLat]: BoundingBox, dialect: 'sqlite' | 'postgres'): Query {
  const indexed =
    dialect === 'postgres'
      ? sql<boolean>`point(longitude, latitude) <@ box(point(${num(minLon)}, ${num(minLat)}), point(${num(maxLon)}, ${num(maxLat)}))`
      : sql<boolean>`listings.rowid in (select id from listings_rtree where max_lat >= ${minLat} and min_lat <= ${maxLat} and max_lon >= ${minLon} and min_lon <= ${maxLon})`;
  return q.where(indexed).where('latitude', '>=', minLat).where('latitude', '<=', maxLat).where('longitude', '>=', minLon).where('longitude', '<=', maxLon);
}

/** Active listings of `kind` inside `box`: id and position (for a polygon, tested point by point after). */
export async function listingsInBox(db: Kysely<Database>, kind: ListingKind, box: BoundingBox, dialect: 'sqlite' | 'postgres') {
  const q = inBox(db.selectFrom('listings').where('kind', '=', kind).where('status', '=', 'ACTIVE'), box, dialect);
  return (await q.select(['id', 'latitude', 'longitude']).execute()) as { id: string; latitude: number; longitude: number }[];
}

/**
 * Active listings of `kind` within `near.radius` metres (spatial index, then great-circle), other than
 * `exceptId`: their summary columns, size and distance in metres.
 */
export async function listingsNear(
  db: Kysely<Database>,
  kind: ListingKind,
  near: { latitude: number; longitude: number; radius: number },
  exceptId: string,
  dialect: 'sqlite' | 'postgres',
) {
  const q = inBox(db.selectFrom('listings').where('kind', '=', kind).where('status', '=', 'ACTIVE').where('id', '!=', exceptId), boxAround(near), dialect)
    .where(distanceFrom(near), '<=', near.radius)
    .select(SUMMARY_COLUMNS)
    .select(['sqft'])
    .select(sql<number>`round(${distanceFrom(near)})`.as('distance'));
  return q.execute();
}

/** The search's filters on active listings of its kind; a yes/no filter's yes is read `byIndex` unless told otherwise. */
function filtered(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext, flagsByIndex = true): Query {
  let q: Query = db.selectFrom('listings').where('kind', '=', s.kind).where('status', '=', 'ACTIVE');
  if (s.areaIds) q = q.where('area_id', 'in', s.areaIds.length ? s.areaIds : [-1]);
  if (s.minPrice !== undefined) q = q.where('price', '>=', s.minPrice);
  if (s.maxPrice !== undefined) q = q.where('price', '<=', s.maxPrice);
  if (s.minBeds !== undefined) q = q.where('bedroom_count', '>=', s.minBeds);
  if (s.maxBeds !== undefined) q = q.where('bedroom_count', '<=', s.maxBeds);
  if (s.minBaths !== undefined) q = q.where('full_bathroom_count', '>=', s.minBaths);
  if (s.maxBaths !== undefined) q = q.where('full_bathroom_count', '<=', s.maxBaths);
  if (s.minSqft !== undefined) q = q.where('sqft', '>=', s.minSqft);
  if (s.maxSqft !== undefined) q = q.where('sqft', '<=', s.maxSqft);
  // One EXISTS per amenity: each is a primary-key probe of listing_amenities for a candidate row.
  for (const amenity of new Set(s.amenities ?? [])) {
    q = q.where(({ exists, selectFrom }) =>
      exists(selectFrom('listing_amenities').select('listing_amenities.listing_id').whereRef('listing_amenities.listing_id', '=', 'listings.id').where('listing_amenities.amenity', '=', amenity)),
    );
  }
  for (const [name, column] of Object.entries(YES_NO_FILTERS)) q = flagFilter(q, column, s[name as keyof typeof YES_NO_FILTERS], flagsByIndex);
  if (s.buildingTypes?.length) q = q.where('building_type', 'in', s.buildingTypes);
  if (s.prewar === true) q = q.where('year_built', '<', PREWAR_BEFORE_YEAR);
  if (s.prewar === false) q = q.where((eb) => eb.or([eb('year_built', 'is', null), eb('year_built', '>=', PREWAR_BEFORE_YEAR)]));
  if (s.saleType) q = q.where('sale_type', '=', s.saleType);
  const now = ctx.now.getTime();
  // Days on market = whole days since listed_at, so ">= n days" is "listed at or before now - n days".
  if (s.minDaysOnMarket !== undefined) q = q.where('listed_at', '<=', new Date(now - s.minDaysOnMarket * DAY_MS).toISOString());
  if (s.maxDaysOnMarket !== undefined) q = q.where('listed_at', '>', new Date(now - (s.maxDaysOnMarket + 1) * DAY_MS).toISOString());
  if (s.listedAfter) q = q.where('listed_at', '>', s.listedAfter);
  if (s.listedBefore) q = q.where('listed_at', '<', s.listedBefore);
  const nowIso = ctx.now.toISOString();
  if (s.hasOpenHouse === true) q = q.where(sql<string>`coalesce(open_house_end, open_house_start)`, '>', nowIso);
  if (s.hasOpenHouse === false) {
    q = q.where((eb) => eb.or([eb(sql<string>`coalesce(open_house_end, open_house_start)`, 'is', null), eb(sql<string>`coalesce(open_house_end, open_house_start)`, '<=', nowIso)]));
  }
  if (s.maxMonthlyCost !== undefined) {
    q = q.where(sql<number>`price * cast(${ctx.mortgageFactor} as double precision) + monthly_charges`, '<=', s.maxMonthlyCost);
  }
  if (s.minTransitScore !== undefined) q = q.where('transit_score', '>=', s.minTransitScore);
  if (s.availableBefore) q = q.where('available_at', '<=', s.availableBefore);
  if (s.ids) q = q.where('id', 'in', s.ids.length ? s.ids : ['']);
  if (s.bbox) q = inBox(q, s.bbox, ctx.dialect);
  if (s.near) q = inBox(q, boxAround(s.near), ctx.dialect).where(distanceFrom(s.near), '<=', s.near.radius);
  return q;
}

const SORT_COLUMN = {
  RECOMMENDED: 'recommended_score',
  PRICE: 'price',
  LISTED_AT: 'listed_at',
  PRICE_PER_SQFT: 'price_per_sqft',
} as const;

/** The index that holds each order (kind, status, the sort keys, id), read forwards or backwards on SQLite. */
export const ORDER_INDEX = {
  RECOMMENDED: 'listings_recommended',
  PRICE: 'listings_price',
  LISTED_AT: 'listings_listed_at',
  PRICE_PER_SQFT: 'listings_ppsf',
} as const;

/** The filters each order's index holds on its entries (migrations 014, 015, 018, 019): a walk tests them without reading the row. */
export const HELD_BY_ORDER_INDEX: Record<keyof typeof ORDER_INDEX, ReadonlySet<string>> = {
  RECOMMENDED: new Set(['areaIds', 'minBeds', 'maxBeds', 'minDaysOnMarket', 'maxDaysOnMarket', 'listedAfter', 'listedBefore', 'noFee']),
  PRICE: new Set(['areaIds', 'minBeds', 'maxBeds', 'minPrice', 'maxPrice']),
  LISTED_AT: new Set(['areaIds', 'minBeds', 'maxBeds', 'minDaysOnMarket', 'maxDaysOnMarket', 'listedAfter', 'listedBefore']),
  PRICE_PER_SQFT: new Set(['areaIds', 'minBeds', 'maxBeds', 'minSqft', 'maxSqft']),
};

/**
 * How much cheaper a walk passes an index entry that holds every filter than a sort reads and sorts a
 * match, as measured at a million listings on SQLite (commit 28034ed).
 */
const HELD_ENTRY_SPEEDUP = 20;

/** Keys of a search that order or page it rather than filter it. */
const NOT_FILTERS = new Set(['kind', 'sort', 'sortDir', 'page', 'perPage', 'after']);

/** How a page is read (see {@link pageStrategy}). */
export type PageStrategy = 'empty' | 'walk' | 'sort' | 'planner';

/**
 * How a page is read, from the search's exact total (on PostgreSQL a `walk` names no index: {@link deferredPage}):
 * - `empty`: the page starts past the last match (no match at all, say), so there is nothing to read;
 * - `sort`: few matches: read them through the filters' best index and sort them. A walk of the order's
 *   index passes about (rows before the page + perPage) x activeOfKind / total entries when the matches
 *   are spread through the order, a sort visits `total`: this is taken when it costs no more, an entry
 *   that holds every filter costing a {@link HELD_ENTRY_SPEEDUP}th of a sorted match;
 * - `walk` the order's index to the end of the page when each filter is tested on its entries (area and
 *   bedrooms on every order, dates on the date orders, size on price per square foot, no fee on the
 *   default order: {@link HELD_BY_ORDER_INDEX}):
 *   no row is read but the page's, so even matches bunched far down the order cost little;
 * - otherwise the `planner`'s choice, as for a geographic or id filter (the spatial index or the id
 *   list drive those), the distance order, or an unknown `activeOfKind`.
 *
 * Why: SQLite's statistics cannot tell its planner that a filter matches nothing here or that two columns
 * are tied. At a million listings it walked every sale by listing date for a search that matched none,
 * sorted tens of thousands of rentals to show fifty, and walked the price order for a few sales (figures
 * in commit 6c47169). A walk is not forced when a filter needs the row: prices, sizes and monthly costs are
 * tied to the orders, and such a walk can pass far more rows than the planner's sort reads.
 */
export function pageStrategy(s: ListingSearch, total: number, activeOfKind: number | undefined): PageStrategy {
  const rowsBefore = s.after ? 0 : (s.page - 1) * s.perPage;
  if (!s.after && total <= rowsBefore) return 'empty';
  if (activeOfKind === undefined || s.sort === 'DISTANCE' || s.ids || s.bbox || s.near) return 'planner';
  const filters = Object.entries(s).filter(([key, value]) => value !== undefined && !NOT_FILTERS.has(key));
  const held = filters.length > 0 && filters.every(([key]) => HELD_BY_ORDER_INDEX[s.sort as keyof typeof ORDER_INDEX].has(key));
  // Entries a walk passes cost what a sorted match does (a row read) unless the index holds every filter.
  const entryCost = held ? 1 / HELD_ENTRY_SPEEDUP : 1;
  if (total * total <= (rowsBefore + s.perPage) * activeOfKind * entryCost) return 'sort';
  return held ? 'walk' : 'planner';
}

/** A plugin that reads `listings` of a query's own FROM through one index (SQLite's `INDEXED BY`), for a page that walks its order. */
class ReadThroughIndex implements KyselyPlugin {
  constructor(private readonly index: string) {}

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (!SelectQueryNode.is(node) || !node.from) return node;
    return { ...node, from: { ...node.from, froms: [RawNode.createWithSql(`"listings" indexed by "${this.index}"`)] } } as SelectQueryNode;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
}

/** Sort columns of each order before `id`; `listed_at` and `price_per_sqft` may be null (sorted last). */
export const KEYSET: Record<Exclude<SortField, 'DISTANCE'>, { column: 'price' | 'listed_at' | 'price_per_sqft' | 'recommended_score'; nullable: boolean }[]> = {
  PRICE: [{ column: 'price', nullable: false }],
  LISTED_AT: [{ column: 'listed_at', nullable: true }],
  PRICE_PER_SQFT: [{ column: 'price_per_sqft', nullable: true }],
  RECOMMENDED: [
    { column: 'recommended_score', nullable: false },
    { column: 'listed_at', nullable: true },
  ],
};

/**
 * Rows after `after` in the order (sort keys then id, all in direction `dir`, unknown values last): a
 * row-value comparison `(key, id) > (?, ?)` when no key is nullable, otherwise its expansion with the
 * nulls-last rule. Served by the same index as the ORDER BY, so a deep page costs what the first does.
 */
function afterRow(sort: Exclude<SortField, 'DISTANCE'>, dir: 'asc' | 'desc', after: SearchAfter) {
  const keys = KEYSET[sort];
  const op = dir === 'asc' ? '>' : '<';
  return (eb: ExpressionBuilder<Database, 'listings'>) => {
    if (keys.every((k) => !k.nullable)) {
      return eb(eb.refTuple(...(keys.map((k) => k.column) as ['price']), 'id'), op, eb.tuple(...(after.keys as [number]), after.id));
    }
    // (k1, ..., kn, id) after (v1, ..., vn, id0), nulls last: for some i, the keys before i equal and k_i after v_i.
    const terms = [];
    for (let i = 0; i <= keys.length; i++) {
      const equal = keys.slice(0, i).map((k, j) => (after.keys[j] === null ? eb(k.column, 'is', null) : eb(k.column, '=', after.keys[j] as never)));
      let beyond;
      if (i === keys.length) beyond = eb('id', op, after.id);
      else if (after.keys[i] === null) continue; // nothing sorts after null but nulls, compared on the next key
      else beyond = keys[i].nullable ? eb.or([eb(keys[i].column, op, after.keys[i] as never), eb(keys[i].column, 'is', null)]) : eb(keys[i].column, op, after.keys[i] as never);
      terms.push(eb.and([...equal, beyond]));
    }
    const expanded = eb.or(terms);
    if (keys[0].nullable) return expanded;
    // A bound on the leading key that every term implies: with it the index scan starts at the previous
    // page's last row. PostgreSQL does not derive it from the OR, and scanned from the top of the order
    // on every page instead (0.4 s a page deep into a borough at a million listings).
    return eb.and([eb(keys[0].column, dir === 'asc' ? '>=' : '<=', after.keys[0] as never), expanded]);
  };
}

/**
 * Runs a search: the page of rows asked for and the total number of matches (not counted again when
 * the caller knows it: `knownTotal`). Order: the sort field in
 * the asked direction with unknown values last, then (for RECOMMENDED) the listing date, then id, all in
 * the same direction, so pages never overlap. The total is known before the page is read, and chooses
 * how it is read ({@link pageStrategy}).
 */
export async function searchListings(
  db: Kysely<Database>,
  s: ListingSearch,
  ctx: SearchContext,
  knownTotal?: number,
): Promise<{ total: number; rows: (SummaryRow & { distance?: number })[] }> {
  const base = filtered(db, s, ctx);
  // Count first, and let the total choose. SQLite runs one statement at a time on this thread anyway.
  // PostgreSQL ran the two at once on two connections, which saved the page's few milliseconds but let
  // its planner walk the order for matches it cannot foresee: an amenity no sale has (DOORMAN) walked
  // all 755,133 sales at a million listings, 6 s a page, where the count takes 0.3 s and says none.
  const total = knownTotal ?? (await countListings(db, s, ctx));
  const strategy = pageStrategy(s, total, ctx.activeOfKind);
  if (strategy === 'empty') return { total, rows: [] };
  // A yes/no filter's partial index serves the count, and a sort of few matches; any other page must not
  // be read through it (SQLite took it for every rental with no fee and sorted them all for one page).
  const pageBase = strategy !== 'sort' && asksYes(s) ? filtered(db, s, ctx, false) : base;
  if (strategy === 'walk' && ctx.dialect === 'postgres') return { total, rows: await deferredPage(db, pageBase, s, ctx).execute() };
  const rows = await pageQuery(pageBase, s, ctx, strategy).execute();
  return { total, rows };
}

/**
 * PostgreSQL's walk: the page's ids first, in the order, from a statement that needs no other column,
 * then those rows (sorted again, at most `perPage`). A walk names no index there (SQLite's INDEXED BY);
 * its planner walks the order's index itself. But a plain index scan tests on the table row any filter
 * it cannot make an index condition (an OR, such as `noFee=false`'s "unknown or 0"; a list of areas on a
 * later key column), so it fetched the row of every entry it passed. Asking for the ids alone lets it
 * scan the index only, testing the filters the index holds on its entries: a walk that passes many
 * entries gains much, one whose first entries match costs a little more (figures in commit 7b40130).
 */
function deferredPage(db: Kysely<Database>, pageBase: Query, s: ListingSearch, ctx: SearchContext) {
  const ids = orderedPage(pageBase.select('id'), s, ctx, 'planner');
  return pageQuery(
    db.selectFrom('listings').where('id', 'in', ids),
    { ...s, page: 1, after: undefined },
    ctx,
    'planner',
  );
}

/** The number of active listings matching a search's filters (one COUNT; its order and page play no part). */
export async function countListings(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext): Promise<number> {
  const { n } = await filtered(db, s, ctx).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * Bounds on the order's leading key that a search's filters imply, said outright in its page's statement
 * so that the order's index starts (or stops) at them; each changes no answer. Not on the count: there
 * SQLite took the price bound's range of the price index and read half the sales out of order instead
 * of the table in its own; since migration 020 that count reads the price index alone. At a million
 * listings, one page each:
 * - a size above zero gives a price per square foot (domain `pricePerSqft`): the price-per-square-foot
 *   index is walked from its first known value (size tested on the entry, migration 015), not every sale
 *   of that size read and sorted;
 * - a maximum monthly cost bounds the price ({@link highestPriceWithin}): sales by price, highest first,
 *   walked every dearer sale before the first match (2.3 s);
 * - a minimum transit score puts a floor under the recommended score ({@link lowestRecommendedScore}): the
 *   default order ascending walked every listing scored below it first (1.9 s for sales).
 */
function impliedOrderBounds<Q extends Query>(q: Q, s: ListingSearch, ctx: SearchContext): Q {
  let bounded: Query = q;
  if (s.sort === 'PRICE_PER_SQFT' && s.minSqft !== undefined && s.minSqft > 0) bounded = bounded.where('price_per_sqft', 'is not', null);
  if (s.sort === 'PRICE' && s.maxMonthlyCost !== undefined) {
    const highest = highestPriceWithin(s.maxMonthlyCost, ctx.mortgageFactor);
    if (Number.isFinite(highest)) bounded = bounded.where('price', '<=', highest);
  }
  if (s.sort === 'RECOMMENDED' && s.minTransitScore !== undefined) bounded = bounded.where('recommended_score', '>=', lowestRecommendedScore(s.minTransitScore));
  return bounded as Q;
}

/** The page's statement: summary columns, the order (see {@link searchListings}), the keyset bound or the offset, the limit. */
function pageQuery(base: Query, s: ListingSearch, ctx: SearchContext, strategy: Exclude<PageStrategy, 'empty'>) {
  let rowsQuery = base.select(SUMMARY_COLUMNS).select(['recommended_score', 'price_per_sqft']);
  if (s.near) rowsQuery = rowsQuery.select(sql<number>`round(${distanceFrom(s.near)})`.as('distance')) as unknown as typeof rowsQuery;
  rowsQuery = orderedPage(rowsQuery, s, ctx, strategy);
  if (strategy === 'walk' && s.sort !== 'DISTANCE') rowsQuery = rowsQuery.withPlugin(new ReadThroughIndex(ORDER_INDEX[s.sort]));
  return rowsQuery;
}

/** A query's rows in the page's order (see {@link searchListings}), after the keyset bound or the offset, at most `perPage`. */
function orderedPage<Q extends Query>(page: Q, s: ListingSearch, ctx: SearchContext, strategy: Exclude<PageStrategy, 'empty'>): Q {
  const dir = s.sortDir === 'ASC' ? 'asc' : 'desc';
  // Every term runs in the asked direction so that one index serves the whole ORDER BY (no sort step).
  // NOT NULL columns need no NULLS clause; DESC already puts nulls last on both databases.
  const order = (nullable: boolean) => (ob: OrderByItemBuilder) => {
    if (dir === 'asc') return nullable ? ob.asc().nullsLast() : ob.asc();
    return nullable && ctx.dialect === 'postgres' ? ob.desc().nullsLast() : ob.desc();
  };
  // To sort, the order's terms become expressions, which no index can give in order: the database then
  // reads the matches through the filters' index and sorts them. `+column` on SQLite; PostgreSQL has no
  // unary plus for text, so its text keys are written `column || ''` (the same text, in the same order).
  const key = (column: 'recommended_score' | 'price' | 'listed_at' | 'price_per_sqft' | 'id') => {
    if (strategy !== 'sort') return column;
    if (ctx.dialect === 'postgres' && (column === 'listed_at' || column === 'id')) return sql`(${sql.ref(column)} || '')`;
    return sql`+${sql.ref(column)}`;
  };
  let rowsQuery: Query = page;
  if (s.sort === 'DISTANCE') {
    if (!s.near) throw new Error('a DISTANCE sort needs a point (near)');
    rowsQuery = rowsQuery.orderBy(distanceFrom(s.near), dir);
  } else {
    const column = SORT_COLUMN[s.sort];
    rowsQuery = rowsQuery.orderBy(key(column), order(column === 'listed_at' || column === 'price_per_sqft'));
    if (s.sort === 'RECOMMENDED') rowsQuery = rowsQuery.orderBy(key('listed_at'), order(true));
    rowsQuery = impliedOrderBounds(rowsQuery, s, ctx);
  }
  // The limit stays a bound value: written into the statement, SQLite's planner weighed it wrongly against
  // an order its index serves only in part (the default order ascending: a sort of every match, where the
  // index and a sort of ties do).
  rowsQuery = rowsQuery.orderBy(key('id'), order(false)).limit(s.perPage);
  if (s.after && s.sort !== 'DISTANCE') rowsQuery = rowsQuery.where(afterRow(s.sort, dir, s.after));
  else rowsQuery = rowsQuery.offset((s.page - 1) * s.perPage);
  return rowsQuery as Q;
}
