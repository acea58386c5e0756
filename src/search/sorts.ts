/** A sort key column of the listings table. */
export type SortColumn = 'recommended_score' | 'price' | 'listed_at' | 'price_per_sqft';

/** One term of an order's keyset, before `id`: its column, and whether it may be null (nulls sort last). */
export interface KeysetTerm {
  column: SortColumn;
  nullable: boolean;
}

/**
 * The table of sorts: every order a search may ask for (the wire's `sort` values), each with the index that
 * holds it (kind, status, its keyset, id; migrations 009, 014, 015, 018, 019, 020, 024) and its keyset, the sort
 * keys before `id` that keyset pagination compares. `DISTANCE` has neither: it is computed from `near`,
 * and pages by number.
 */
export const SORTS = {
  RECOMMENDED: {
    index: 'listings_recommended',
    keyset: [
      { column: 'recommended_score', nullable: false },
      { column: 'listed_at', nullable: true },
    ],
  },
  PRICE: { index: 'listings_price', keyset: [{ column: 'price', nullable: false }] },
  LISTED_AT: { index: 'listings_listed_at', keyset: [{ column: 'listed_at', nullable: true }] },
  PRICE_PER_SQFT: { index: 'listings_ppsf', keyset: [{ column: 'price_per_sqft', nullable: true }] },
  DISTANCE: null,
} as const satisfies Record<string, { index: string; keyset: readonly KeysetTerm[] } | null>;

/** A sort a search may ask for. */
export type SortField = keyof typeof SORTS;
/** A sort held by an index of its own (every one but `DISTANCE`). */
export type IndexedSort = Exclude<SortField, 'DISTANCE'>;
export type SortDirection = 'ASC' | 'DESC';

/** Every sort, in the table's order (the wire's enum). */
export const SORT_FIELDS = Object.keys(SORTS) as SortField[];
/** The sorts held by an index, in the table's order. */
export const INDEXED_SORTS = SORT_FIELDS.filter((sort): sort is IndexedSort => SORTS[sort] !== null);

/**
 * The direction of each sort when a search gives no `sortDir`: the interface's sorts keep its `DESC` (highest score,
 * price, newest, highest price per square foot first); `DISTANCE` is nearest first, as every user of a map expects.
 */
export const DEFAULT_SORT_DIRECTIONS: Readonly<Record<SortField, SortDirection>> = {
  RECOMMENDED: 'DESC',
  PRICE: 'DESC',
  LISTED_AT: 'DESC',
  PRICE_PER_SQFT: 'DESC',
  DISTANCE: 'ASC',
};
