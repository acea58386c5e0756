import type { Kysely } from 'kysely';
import { mortgageFactor } from '../domain/monthly-cost.js';
import { boundingBox, outlineContains, type Outline } from '../domain/outline.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { SummaryRow } from '../store/listing-rows.js';
import type { Database } from '../store/schema.js';
import { encodeCursor } from './cursor.js';
import { clusterListings, type ClusterGrid } from './clusters.js';
import type { ListingCluster } from '../wire/cluster.js';
import type { ListingSearch, SearchContext } from './listing-search.js';
import { roundedDistance } from './geography.js';
import { listingsInBox, searchListings } from './query.js';
import { SearchIndex } from './search-index.js';

/** A page of a search: its rows (with the distance in metres when the search has a point), the total, and the cursor of the next page (null at the end or for DISTANCE). */
export interface SearchPage {
  rows: (SummaryRow & { distance?: number })[];
  total: number;
  nextCursor: string | null;
}

export interface SearcherDeps {
  /** What searches read through (`Store.readDb`: a connection that never waits behind a write). */
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  listings: ListingsRepository;
  /** Mortgage assumptions of a sale's monthly cost (percent a year, percent down, years). */
  mortgage: { ratePercent: number; downPaymentPercent: number; termYears: number };
  /** Seconds another instance's write may take to show in the search index's answers (READ_CACHE_SECONDS). */
  readCacheSeconds: number;
  /** Whether searches are answered from the search index ({@link SearchIndex}) while it is current. */
  searchIndex: boolean;
  clock: () => Date;
  /** Logs background work that gave up (a search index build that failed). */
  warn: (message: string, error: unknown) => void;
  /** Logs what made searches wait (a slow delta of the search index). */
  info?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Runs listing searches: from the search index ({@link SearchIndex}) while it holds the store's data version, the
 * page's rows too; otherwise (the index being built, SEARCH_INDEX off, a sort by DISTANCE)
 * in the store, a count and a page (`searchListings`). Either way the same rows, total and next page's cursor
 * (test/search/search-index.test.ts). Freshness and presentation are the caller's (`ReadService.search`).
 */
export class Searcher {
  /** Every active listing's searched columns in memory, when SEARCH_INDEX is on. */
  readonly index: SearchIndex | null;

  constructor(private readonly deps: SearcherDeps) {
    this.index = deps.searchIndex
      ? new SearchIndex({ db: deps.db, listings: deps.listings, readCacheSeconds: deps.readCacheSeconds, warn: deps.warn, info: deps.info })
      : null;
  }

  /** The search narrowed to the listings inside `polygon` (its `ids`), when one is given. */
  private async insidePolygon(search: ListingSearch, polygon?: Outline): Promise<ListingSearch> {
    if (!polygon) return search;
    // The spatial index narrows to the polygon's box; each candidate is then tested against the outline.
    const box = boundingBox(polygon);
    const inside = (await listingsInBox(this.deps.db, search.kind, box, this.deps.dialect)).filter((l) => outlineContains(polygon, l, box));
    return { ...search, ids: inside.map((l) => l.id) };
  }

  private context(): SearchContext {
    return { now: this.deps.clock(), mortgageFactor: mortgageFactor(this.deps.mortgage), dialect: this.deps.dialect };
  }

  /** The page `search` asks for, inside `polygon` when one is given. */
  async find(search: ListingSearch, polygon?: Outline): Promise<SearchPage> {
    const ctx = this.context();
    const indexed = await this.index?.find(search, ctx, polygon);
    const { rows, total } = indexed
      ? { rows: withDistances(indexed.rows, search.near), total: indexed.total }
      : await searchListings(this.deps.db, await this.insidePolygon(search, polygon), ctx);
    const last = rows.at(-1);
    const nextCursor = last && rows.length === search.perPage ? encodeCursor(search, last) : null;
    return { rows, total, nextCursor };
  }

  /** The matches of `search` (inside `polygon` when one is given) counted by the cells of `grid` ({@link clusterListings}). */
  async clusters(search: ListingSearch, grid: ClusterGrid, polygon?: Outline): Promise<ListingCluster[]> {
    const ctx = this.context();
    return (
      (await this.index?.clusters(search, ctx, grid, polygon)) ??
      clusterListings(this.deps.db, await this.insidePolygon(search, polygon), ctx, grid)
    );
  }
}

/** The index's rows of a search with a point, each with its distance from it in metres as the store gives it ({@link roundedDistance}). */
function withDistances(rows: SummaryRow[], near: ListingSearch['near']): SearchPage['rows'] {
  if (!near) return rows;
  return rows.map((row) => ({ ...row, distance: roundedDistance(near, row.latitude as number, row.longitude as number) }));
}
