import { sql, type Kysely, type OrderByItemBuilder, type SelectQueryBuilder } from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import { SUMMARY_COLUMNS, type SummaryRow } from './listing-rows.js';
import type { Database } from './schema.js';

const DAY_MS = 86_400_000;

export type SortField = 'RECOMMENDED' | 'PRICE' | 'LISTED_AT' | 'PRICE_PER_SQFT';
export type SortDirection = 'ASC' | 'DESC';

/**
 * A validated search, in the API's terms: prices and monthly cost in dollars, areas in square feet,
 * days as whole days, instants as UTC ISO 8601. `areaIds` are already expanded to descendants.
 * Boolean filters: `true` keeps listings known to have the feature; `false` keeps the others
 * (known not to, or unknown).
 */
export interface ListingSearch {
  kind: ListingKind;
  areaIds?: number[];
  minPrice?: number;
  maxPrice?: number;
  minBeds?: number;
  maxBeds?: number;
  minBaths?: number;
  maxBaths?: number;
  minSqft?: number;
  maxSqft?: number;
  amenities?: string[];
  petsAllowed?: boolean;
  buildingTypes?: string[];
  prewar?: boolean;
  saleType?: string;
  minDaysOnMarket?: number;
  maxDaysOnMarket?: number;
  listedAfter?: string;
  listedBefore?: string;
  hasOpenHouse?: boolean;
  has3dTour?: boolean;
  /** Dollars a month; needs `mortgageFactor`. */
  maxMonthlyCost?: number;
  minTransitScore?: number;
  noFee?: boolean;
  furnished?: boolean;
  /** `YYYY-MM-DD`: available on or before this day. */
  availableBefore?: string;
  sort: SortField;
  sortDir: SortDirection;
  page: number;
  perPage: number;
}

/** Clock and mortgage factor (monthly payment per dollar of price) the search is evaluated with. */
export interface SearchContext {
  now: Date;
  mortgageFactor: number;
  /** PostgreSQL sorts nulls first in DESC order and must be told otherwise; SQLite already puts them last. */
  dialect: 'sqlite' | 'postgres';
}

type Query = SelectQueryBuilder<Database, 'listings', object>;

/** First year of post-war construction: `prewar` means built before 1940. */
export const PREWAR_BEFORE_YEAR = 1940;

function flagFilter(q: Query, column: 'pets_allowed' | 'has_3d_tour' | 'no_fee' | 'furnished', value: boolean | undefined): Query {
  if (value === undefined) return q;
  return value ? q.where(column, '=', 1) : q.where((eb) => eb.or([eb(column, 'is', null), eb(column, '=', 0)]));
}

function filtered(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext): Query {
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
  q = flagFilter(q, 'pets_allowed', s.petsAllowed);
  q = flagFilter(q, 'has_3d_tour', s.has3dTour);
  q = flagFilter(q, 'no_fee', s.noFee);
  q = flagFilter(q, 'furnished', s.furnished);
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
  return q;
}

const SORT_COLUMN = {
  RECOMMENDED: 'recommended_score',
  PRICE: 'price',
  LISTED_AT: 'listed_at',
  PRICE_PER_SQFT: 'price_per_sqft',
} as const;

/**
 * Runs a search: the page of rows asked for and the total number of matches. Order: the sort field in
 * the asked direction with unknown values last, then (for RECOMMENDED) the listing date, then id, all in
 * the same direction, so pages never overlap.
 */
export async function searchListings(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext): Promise<{ total: number; rows: SummaryRow[] }> {
  const base = filtered(db, s, ctx);
  const dir = s.sortDir === 'ASC' ? 'asc' : 'desc';
  // Every term runs in the asked direction so that one index serves the whole ORDER BY (no sort step).
  // NOT NULL columns need no NULLS clause; DESC already puts nulls last on both databases.
  const order = (nullable: boolean) => (ob: OrderByItemBuilder) => {
    if (dir === 'asc') return nullable ? ob.asc().nullsLast() : ob.asc();
    return nullable && ctx.dialect === 'postgres' ? ob.desc().nullsLast() : ob.desc();
  };
  const column = SORT_COLUMN[s.sort];
  let rowsQuery = base.select(SUMMARY_COLUMNS).orderBy(column, order(column === 'listed_at' || column === 'price_per_sqft'));
  if (s.sort === 'RECOMMENDED') rowsQuery = rowsQuery.orderBy('listed_at', order(true));
  rowsQuery = rowsQuery.orderBy('id', order(false)).limit(s.perPage).offset((s.page - 1) * s.perPage);
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    rowsQuery.execute(),
  ]);
  return { total: Number(countRow.n), rows };
}
