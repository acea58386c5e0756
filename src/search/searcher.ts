import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { mortgageFactor } from '../domain/monthly-cost.js';
import { boundingBox, outlineContains, type Outline } from '../domain/outline.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { SummaryRow } from '../store/listing-rows.js';
import type { Database } from '../store/schema.js';
import { encodeCursor } from './cursor.js';
import { filtersOf } from './filters.js';
import { clusterListings, type ClusterGrid } from './clusters.js';
import type { ListingCluster } from '../wire/cluster.js';
import type { ListingSearch, SearchContext } from './listing-search.js';
import { PriceLadders } from './price-ladders.js';
import { noSideFilter } from './plan.js';
import { countListings, listingsInBox, rowsByIds, searchListings } from './query.js';
import { SearchIndex } from './search-index.js';

/** A page of a search: its rows (with the distance in metres when the search has a point), the total, and the cursor of the next page (null at the end or for DISTANCE). */
export interface SearchPage {
  rows: (SummaryRow & { distance?: number })[];
  total: number;
  nextCursor: string | null;
}

export interface SearcherDeps {
  /** What searches read through (`Store.readDb`: on SQLite, a connection off the event loop). */
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  listings: ListingsRepository;
  /** Mortgage assumptions of a sale's monthly cost (percent a year, percent down, years). */
  mortgage: { ratePercent: number; downPaymentPercent: number; termYears: number };
  /** Seconds a total may be reused: how long another instance's write may take to show in it. */
  readCacheSeconds: number;
  /** Whether searches are answered from the search index ({@link SearchIndex}) while it is current. */
  searchIndex: boolean;
  clock: () => Date;
  /** Logs background work that gave up (a search index build that failed). */
  warn: (message: string, error: unknown) => void;
}

/**
 * Runs listing searches on the store: a polygon narrowed to listing ids, the total taken from memory when it
 * can be or counted once for all asking it ({@link Searcher.totalOf}), the page read as the plan says (`searchListings`), and the
 * next page's cursor. Freshness and presentation are the caller's (`Mirror.search`).
 */
export class Searcher {
  /**
   * Search totals by listings version and filters (not page or order): a deeper page costs no recount. A
   * total being counted is shared: requests asking the same filters meanwhile wait for that count
   * (lru-cache's `fetch`) instead of each starting one, as many clients paging one search at once would.
   */
  private readonly totals: LRUCache<string, number, { search: ListingSearch; ctx: SearchContext }>;
  /** Totals of searches by kind, areas, price and bedrooms, counted in memory while current (see {@link PriceLadders}). */
  readonly priceLadders: PriceLadders;
  /** Every active listing's searched columns in memory, when SEARCH_INDEX is on: searches' pages and totals while it is current. */
  readonly index: SearchIndex | null;

  constructor(private readonly deps: SearcherDeps) {
    this.totals = new LRUCache({
      max: 10_000,
      ttl: Math.max(1, deps.readCacheSeconds * 1000),
      // A count whose entry is evicted while it runs still answers the requests waiting for it (not undefined).
      ignoreFetchAbort: true,
      fetchMethod: async (_key, _stale, { context }) => (await this.noSideTotal(context.search, context.ctx)) ?? countListings(deps.db, context.search, context.ctx),
    });
    this.priceLadders = new PriceLadders(deps.listings, deps.readCacheSeconds);
    this.index = deps.searchIndex ? new SearchIndex({ db: deps.db, listings: deps.listings, recheckSeconds: deps.readCacheSeconds, warn: deps.warn }) : null;
  }

  /** The search narrowed to the listings inside `polygon` (its `ids`), when one is given. */
  private async insidePolygon(search: ListingSearch, polygon?: Outline): Promise<ListingSearch> {
    if (!polygon) return search;
    // The spatial index narrows to the polygon's box; each candidate is then tested against the outline.
    const box = boundingBox(polygon);
    const inside = (await listingsInBox(this.deps.db, search.kind, box, this.deps.dialect)).filter((l) => outlineContains(polygon, l, box));
    return { ...search, ids: inside.map((l) => l.id) };
  }

  /** The page `search` asks for, inside `polygon` when one is given. */
  async find(search: ListingSearch, polygon?: Outline): Promise<SearchPage> {
    const asked = search;
    const now = this.deps.clock();
    const indexed = await this.index?.find(search, { now, mortgageFactor: mortgageFactor(this.deps.mortgage), dialect: this.deps.dialect }, polygon);
    if (indexed) {
      const rows = await rowsByIds(this.deps.db, indexed.ids);
      const last = rows.at(-1);
      return { rows, total: indexed.total, nextCursor: last && rows.length === search.perPage ? encodeCursor(asked, last) : null };
    }
    search = await this.insidePolygon(search, polygon);
    // How to read the page is weighed by the total against the kind's active listings (plan.ts's pageStrategy).
    const ctx: SearchContext = {
      now,
      mortgageFactor: mortgageFactor(this.deps.mortgage),
      dialect: this.deps.dialect,
      activeOfKind: await this.priceLadders.activeOfKind(search.kind),
    };
    const known = await this.totalOf(search, ctx);
    const walkEntries = await this.priceLadders.walkEstimate(search, known);
    const { rows, total } = await searchListings(this.deps.db, search, { ...ctx, walkEntries }, known);
    const last = rows.at(-1);
    const nextCursor = last && rows.length === search.perPage ? encodeCursor(asked, last) : null;
    return { rows, total, nextCursor };
  }

  /** The matches of `search` (inside `polygon` when one is given) counted by the cells of `grid` ({@link clusterListings}). */
  async clusters(search: ListingSearch, grid: ClusterGrid, polygon?: Outline): Promise<ListingCluster[]> {
    const narrowed = await this.insidePolygon(search, polygon);
    const ctx: SearchContext = { now: this.deps.clock(), mortgageFactor: mortgageFactor(this.deps.mortgage), dialect: this.deps.dialect };
    return clusterListings(this.deps.db, narrowed, ctx, grid);
  }

  /** The key of a search's kept total: the listings version, the minute (date filters read the clock) and its filters, not its order or page. */
  private totalKey(search: ListingSearch, now: Date): string {
    return `${this.deps.listings.version}|${Math.floor(now.getTime() / 60_000)}|${search.kind}|${JSON.stringify(filtersOf(search))}`;
  }

  /**
   * A search's total: the price ladders' when they hold it, else kept from an earlier count (at most
   * readCacheSeconds old), else counted once for every request asking it meanwhile ({@link Searcher.totals}).
   */
  private async totalOf(search: ListingSearch, ctx: SearchContext): Promise<number> {
    const inLadders = await this.priceLadders.total(search);
    if (inLadders !== undefined) return inLadders;
    const total = await this.totals.fetch(this.totalKey(search, ctx.now), { context: { search, ctx } });
    // fetchMethod returns a number and aborts are ignored, so undefined does not come; lru-cache's type allows it.
    return total ?? countListings(this.deps.db, search, ctx);
  }

  /**
   * A search's total when it can be had without visiting every match: the price ladders', kept from an
   * earlier count, or derived for the no side of a yes/no filter ({@link Searcher.noSideTotal}). Undefined
   * otherwise.
   */
  private async totalAtHand(search: ListingSearch, ctx: SearchContext): Promise<number | undefined> {
    return (await this.priceLadders.total(search)) ?? this.totals.get(this.totalKey(search, ctx.now)) ?? (await this.noSideTotal(search, ctx));
  }

  /**
   * For a search that asks the no side of a yes/no filter ({@link noSideFilter}), the total without that
   * filter, when at hand, less the count of its yes side, which the filter's partial index serves.
   * Counting a common "no" side visits most of a kind's listings; its rare yes side is a short index range.
   * Undefined for other searches, or when the total without the filter is not at hand (then one count).
   */
  private async noSideTotal(search: ListingSearch, ctx: SearchContext): Promise<number | undefined> {
    const filter = noSideFilter(search);
    if (!filter) return undefined;
    const all = await this.totalAtHand({ ...search, [filter]: undefined }, ctx);
    if (all === undefined) return undefined;
    const yes = await countListings(this.deps.db, { ...search, [filter]: true }, ctx);
    // Never below zero, should another instance's write land between the two readings.
    return Math.max(0, all - yes);
  }
}
