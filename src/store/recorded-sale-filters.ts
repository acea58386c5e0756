import { sql, type SelectQueryBuilder } from 'kysely';
import type { DistrictName } from '../domain/city-districts.js';
import { DISTRICT_COLUMNS, type Database } from './schema.js';

/** What a recorded sales search asks: every filter optional; dollars, square feet, dates `YYYY-MM-DD`, metres. */
export interface RecordedSaleSearch extends Partial<Record<DistrictName, number[]>> {
  boroughIds?: number[];
  /** Areas (with their descendants already resolved): sales positioned in one of them. */
  areaIds?: number[];
  bbox?: [number, number, number, number];
  near?: { latitude: number; longitude: number; radius: number };
  from?: string;
  to?: string;
  minPrice?: number;
  maxPrice?: number;
  /** DOF building class category codes (`01`, `13`, ...): the two digits that start the category's text. */
  categories?: string[];
  bbl?: string;
  buildingId?: string;
  /** false: leave out transfers without consideration; true: only them; absent: both. */
  noConsideration?: boolean;
  sort: 'saleDate' | 'salePrice' | 'pricePerSqft';
  descending: boolean;
  page: number;
  perPage: number;
}

/** A filter of a recorded sales search: every part of {@link RecordedSaleSearch} but its order and page. */
export type RecordedSaleFilterName = Exclude<keyof RecordedSaleSearch, 'sort' | 'descending' | 'page' | 'perPage'>;

type SalesQuery = SelectQueryBuilder<Database, 'recorded_sales', object>;

const METRES_PER_DEGREE = 111_320;

/** A district filter: the sales whose stored district (the polygon holding their position) is listed; none listed matches none. */
const inDistricts =
  (name: DistrictName) =>
  (q: SalesQuery, numbers: number[]): SalesQuery =>
    q.where(DISTRICT_COLUMNS[name], 'in', numbers.length ? numbers : [-1]);

/**
 * The table of recorded sales filters: each filter's SQL, in the order the conditions are written. The compiler holds
 * it to {@link RecordedSaleSearch}, so a filter added there without its row does not build; the test of every filter
 * at its bounds reads it (test/open-data/recorded-sale-bounds.test.ts).
 */
export const RECORDED_SALE_FILTERS: {
  [K in RecordedSaleFilterName]-?: (q: SalesQuery, value: NonNullable<RecordedSaleSearch[K]>) => SalesQuery;
} = {
  boroughIds: (q, ids) => (ids.length ? q.where('borough_id', 'in', ids) : q),
  areaIds: (q, ids) => (ids.length ? q.where('area_id', 'in', ids) : q),
  bbox: (q, [minLon, minLat, maxLon, maxLat]) =>
    q.where('longitude', '>=', minLon).where('longitude', '<=', maxLon).where('latitude', '>=', minLat).where('latitude', '<=', maxLat),
  near: (q, { latitude, longitude, radius }) => {
    const dLat = radius / METRES_PER_DEGREE;
    const lonScale = Math.cos((latitude * Math.PI) / 180);
    const dLon = dLat / lonScale;
    // A box first (the index-friendly part), then the distance on a local flat projection: exact enough within a city.
    return q
      .where('latitude', '>=', latitude - dLat)
      .where('latitude', '<=', latitude + dLat)
      .where('longitude', '>=', longitude - dLon)
      .where('longitude', '<=', longitude + dLon)
      .where(
        sql<boolean>`((latitude - ${latitude}) * (latitude - ${latitude})) + ((longitude - ${longitude}) * ${lonScale}) * ((longitude - ${longitude}) * ${lonScale}) <= ${dLat * dLat}`,
      );
  },
  from: (q, day) => q.where('sale_date', '>=', day),
  to: (q, day) => q.where('sale_date', '<=', day),
  minPrice: (q, dollars) => q.where('sale_price', '>=', dollars),
  maxPrice: (q, dollars) => q.where('sale_price', '<=', dollars),
  categories: (q, codes) => (codes.length ? q.where((eb) => eb.or(codes.map((c) => eb('building_class_category', 'like', `${c} %`)))) : q),
  bbl: (q, bbl) => q.where('bbl', '=', bbl),
  buildingId: (q, id) => q.where('building_id', '=', id),
  noConsideration: (q, yes) => q.where('no_consideration', '=', yes ? 1 : 0),
  communityDistrict: inDistricts('communityDistrict'),
  policePrecinct: inDistricts('policePrecinct'),
  schoolDistrict: inDistricts('schoolDistrict'),
};

/** Every recorded sales filter, in the table's order. */
export const RECORDED_SALE_FILTER_NAMES = Object.keys(RECORDED_SALE_FILTERS) as RecordedSaleFilterName[];

/** Keeps the recorded sales that match every filter `q` sets. */
export function applyRecordedSaleFilters(base: SalesQuery, q: RecordedSaleSearch): SalesQuery {
  return RECORDED_SALE_FILTER_NAMES.reduce(
    (query, name) =>
      q[name] === undefined ? query : (RECORDED_SALE_FILTERS[name] as (q: SalesQuery, v: unknown) => SalesQuery)(query, q[name]),
    base,
  );
}
