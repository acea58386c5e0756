import type { SelectQueryBuilder } from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import type { BoundingBox } from '../domain/outline.js';
import type { DistrictName } from '../domain/city-districts.js';
import type { SearchFilters } from '../domain/search-filters.js';
import type { Database } from '../store/schema.js';
import type { SortDirection, SortField } from './sorts.js';

/**
 * A validated search: the {@link SearchFilters} (the domain's one definition, in the API's terms and
 * units; instants normalised to UTC) plus what the route resolved: `areaIds` expanded to descendants,
 * comma lists split (the districts' among them: any listed district may hold the listing), the geography parsed, the order and the page. Every filter has a row in the table
 * of filters (`FILTERS`, filters.ts), which the compiler holds to this type. Final once built: a stage that narrows it
 * (a polygon's `ids`) makes a new one.
 */
export type ListingSearch = Readonly<
  SearchFilters &
    Partial<Record<DistrictName, number[]>> & {
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
    }
>;

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
}

/** A query on the listings table, as the search builds it. */
export type ListingsQuery = SelectQueryBuilder<Database, 'listings', object>;

/** The keys of a search that say what is searched and how it is ordered and paged, not which listings match. */
export const ORDER_AND_PAGE = ['kind', 'sort', 'sortDir', 'page', 'perPage', 'after'] as const satisfies readonly (keyof ListingSearch)[];

/** A filter of a search: every other key of {@link ListingSearch}. */
export type FilterName = Exclude<keyof ListingSearch, (typeof ORDER_AND_PAGE)[number]>;
