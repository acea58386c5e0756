import type { Outline } from '../domain/outline.js';
import type { ListingCluster } from '../wire/cluster.js';
import { cellAt, clustersOfSums, type CellSums, type ClusterGrid } from './clusters.js';
import { GRID_CELLS, sumCells, sumCellsInBox } from './cell-sums.js';
import { FILTERS, filtersOf, type FilterRow } from './filters.js';
import type { SummaryRow } from '../store/listing-rows.js';
import { summaryRowAt, type ListingColumns } from './listing-columns.js';
import type { ColumnsBuilder } from './columns-builder.js';
import { readerOf } from '../lib/narrow-arrays.js';
import type { Steps } from '../lib/stepwise.js';
import { priceRowRange, type RowRange } from './row-order.js';
import type { ListingSearch, SearchContext } from './listing-search.js';
import { fused, insideOutline, mostSelectiveFirst, outsideBits, type CandidateFilter } from './candidate-filters.js';
import { SortedOrders, type RowOrder } from './sorted-orders.js';

/** A page as the index finds it: its listings' rows in the page's order ({@link summaryRowAt}), and the search's total. */
export interface IndexedPage {
  rows: SummaryRow[];
  total: number;
}

/** Part of a search's matches in its order: `count` rows from a place (`rowIds`), and the search's total. */
export interface IndexedWindow {
  rowIds: number[];
  total: number;
}

/** Rows before a search's page: none for a keyset page, which starts at its cursor. */
export const rowsBefore = (search: ListingSearch): number => (search.after ? 0 : (search.page - 1) * search.perPage);

/**
 * One kind's active listings in memory: their columns and every order, and the search over them. A search
 * starts from the rows of its areas (or every row), keeps those each filter's candidate filter keeps (the table of
 * filters' `memory`), and reads its page either by walking the order and picking the matches, or, when the
 * matches are few, by sorting them on their sort keys: the same rows, in the same order, as the store's
 * statement gives, and the same total.
 */
export class IndexedListings {
  readonly orders: SortedOrders;
  /** Rows of a search's matches, reused by every search (they run one at a time, synchronously). */
  private readonly matches: Int32Array;
  /**
   * Per row, the number of the last walk whose search matched the listing: a walk marks its matches with a new number,
   * so that no pass clears the marks of the one before (but every 255th, when the numbers start again). A byte a
   * listing, where four took 3 MiB more at a million listings.
   */
  private readonly marks: Uint8Array;
  private walks = 0;
  /** The sort keys of a search's matches when few ({@link sorted}): grown to the most a search has needed, and reused. */
  private keys = new Float64Array(0);
  /** Every range of rows: each area's, then the listings' in none. Where a search with no area starts. */
  private readonly everyRange: readonly RowRange[];

  /** Active listings held. */
  get size(): number {
    return this.columns.size;
  }

  /** @param orders the orders of `columns`, when made already (in steps: {@link IndexedListings.making}). */
  constructor(
    readonly columns: ListingColumns,
    orders?: SortedOrders,
  ) {
    this.orders = orders ?? SortedOrders.of(columns);
    this.matches = new Int32Array(columns.size);
    this.marks = new Uint8Array(columns.size);
    this.everyRange = [...[...columns.areaRowRanges.values()].flat(), ...columns.unplacedRowRanges];
  }

  /** The listings `builder` gathered, their columns and orders made in steps ({@link Steps}): what a build runs. */
  static *making(builder: ColumnsBuilder): Steps<IndexedListings> {
    const columns = yield* builder.finishing();
    return new IndexedListings(columns, yield* SortedOrders.making(columns));
  }

  /**
   * The page `search` asks for, inside `polygon` when one is given; undefined when it sets a filter only the
   * store answers (`ids`) or sorts by DISTANCE.
   */
  page(search: ListingSearch, ctx: SearchContext, polygon?: Outline): IndexedPage | undefined {
    const found = this.window(search, ctx, polygon, rowsBefore(search), search.perPage);
    return found && { rows: found.rowIds.map((rowId) => summaryRowAt(this.columns, rowId)), total: found.total };
  }

  /**
   * `count` of the search's matches in its order, after the first `skip` (and after its keyset position, when it has
   * one), leaving out the rows set in `stale` (listings written since these columns were built); undefined as
   * {@link page}.
   */
  window(
    search: ListingSearch,
    ctx: SearchContext,
    polygon: Outline | undefined,
    skip: number,
    count: number,
    stale?: Uint32Array,
  ): IndexedWindow | undefined {
    if (search.sort === 'DISTANCE') return undefined;
    const plan = this.plan(search, ctx, polygon, stale);
    if (plan === undefined) return undefined;
    // With no filter but its ranges', a search's total is their length, and a walk tells a match by its range: nothing
    // is gathered (a borough at a million listings is some 300,000 rows).
    const rangesOnly = plan.rest.length === 0;
    const total = rangesOnly ? plan.ranges.reduce((sum, range) => sum + range.end - range.start, 0) : this.gather(plan);
    if (total <= skip) return { rowIds: [], total };
    const n = this.columns.size;
    // Walking passes about n/total entries a match; sorting costs each match a key and its share of a sort.
    const walked = ((skip + count) * n) / total;
    if (total * Math.log2(total + 1) <= 8 * walked) {
      if (rangesOnly) this.gather(plan);
      return { rowIds: this.sorted(search, total, skip, count), total };
    }
    const isMatch = rangesOnly ? inRanges(plan.ranges) : this.marked(total);
    return { rowIds: this.walked(search, skip, count, plan.priceRange, isMatch), total };
  }

  /**
   * How a search finds its matches, or undefined when a filter is the store's: the ranges of rows it starts from (the
   * ranges of its areas, every listing's when it has none, whose bedroom count is in its range, each cut to its price
   * range by {@link priceRowRange}), the other filters fused into as few passes as they can be, and the price range the
   * matches lie in when the search has one.
   */
  private plan(
    search: ListingSearch,
    ctx: SearchContext,
    polygon?: Outline,
    stale?: Uint32Array,
  ): { ranges: RowRange[]; rest: CandidateFilter[]; priceRange: { min: number; max: number } | undefined } | undefined {
    const candidateFilters: CandidateFilter[] = [];
    let areas: readonly number[] | undefined;
    for (const [name, value] of filtersOf(search)) {
      const memory = (FILTERS[name] as FilterRow<unknown>).memory;
      if (!memory) return undefined;
      const candidateFilter = memory(this.columns, value, ctx);
      if (candidateFilter.areas) areas = candidateFilter.areas;
      else candidateFilters.push(candidateFilter);
    }
    if (polygon) candidateFilters.push(insideOutline(polygon, this.positions()));
    if (stale) candidateFilters.push(outsideBits(stale));
    const fusedFilters = fused(candidateFilters);
    const { areaRowRanges, numbers } = this.columns;
    const price = fusedFilters.find((candidateFilter) => candidateFilter.range?.column === numbers.price);
    const bedrooms = fusedFilters.find((candidateFilter) => candidateFilter.range?.column === numbers.bedroom_count);
    const ranges: RowRange[] = [];
    const cut = (wholeRanges: readonly RowRange[]) => {
      for (const whole of wholeRanges) {
        // A range's listings share one bedroom count: the range is in the bedroom range, or out of it (unknown: out).
        const beds = numbers.bedroom_count[whole.start];
        if (bedrooms && !(beds >= bedrooms.range!.min && beds <= bedrooms.range!.max)) continue;
        const range = price ? priceRowRange(numbers.price, whole, price.range!.min, price.range!.max) : whole;
        if (range.end > range.start) ranges.push(range);
      }
    };
    if (!areas) cut(this.everyRange);
    else for (const id of areas) cut(areaRowRanges.get(id) ?? []);
    const rest = fusedFilters.filter((candidateFilter) => candidateFilter !== price && candidateFilter !== bedrooms);
    return { ranges, rest, priceRange: price?.range };
  }

  /** Puts the matches of a plan in `matches[0..total)` ({@link plan}: its ranges' rows that every other filter keeps), and says how many. */
  private gather({ ranges, rest }: { ranges: readonly RowRange[]; rest: readonly CandidateFilter[] }): number {
    const { matches } = this;
    let n = 0;
    for (const { start, end } of ranges) for (let rowId = start; rowId < end; rowId++) matches[n++] = rowId;
    for (const candidateFilter of mostSelectiveFirst(rest, matches, n)) n = candidateFilter.keepMatches(matches, n);
    return n;
  }

  /**
   * The search's matches (inside `polygon` when given) counted by the cells of `grid`, as the store's
   * `clusterListings` counts them: cells south to north, west to east within a row; undefined when a filter is the store's.
   */
  clusters(search: ListingSearch, ctx: SearchContext, grid: ClusterGrid, polygon?: Outline): ListingCluster[] | undefined {
    const cells = this.cellSums(search, ctx, grid, polygon);
    return cells && clustersOfSums(grid, cells);
  }

  /**
   * The sums of {@link clusters}' cells, leaving out the rows set in `stale` (as {@link window}); undefined when a filter
   * is the store's.
   */
  cellSums(search: ListingSearch, ctx: SearchContext, grid: ClusterGrid, polygon?: Outline, stale?: Uint32Array): CellSums[] | undefined {
    const plan = this.plan(search, ctx, polygon, stale);
    if (plan === undefined) return undefined;
    const total = this.gather(plan);
    if (search.bbox) {
      const [x0, y0] = cellAt(grid, search.bbox[0], search.bbox[1]);
      const [x1, y1] = cellAt(grid, search.bbox[2], search.bbox[3]);
      if (x1 >= x0 && y1 >= y0 && (x1 - x0 + 1) * (y1 - y0 + 1) <= GRID_CELLS)
        return sumCellsInBox(grid, this.matches, total, this.positions(), this.columns.numbers.price, [x0, y0, x1, y1]);
    }
    return sumCells(grid, this.matches, total, this.positions(), this.columns.numbers.price);
  }

  /** Readers of a row's latitude and longitude in degrees (NaN when unknown), whichever way the columns hold them. */
  private positions(): [latitude: (rowId: number) => number, longitude: (rowId: number) => number] {
    return [readerOf(this.columns.numbers.latitude), readerOf(this.columns.numbers.longitude)];
  }

  /** The page from the matches' sort keys, sorted: for few matches. */
  private sorted(search: ListingSearch, total: number, rowsBefore: number, count: number): number[] {
    const sort = search.sort as Exclude<ListingSearch['sort'], 'DISTANCE'>;
    if (this.keys.length < total) this.keys = new Float64Array(Math.min(this.size, Math.max(total, 2 * this.keys.length)));
    const keys = this.keys;
    let kept = 0;
    for (let i = 0; i < total; i++) {
      const rowId = this.matches[i];
      if (!search.after || this.orders.comesAfter(sort, search.sortDir, rowId, search.after))
        keys[kept++] = this.orders.sortKey(sort, search.sortDir, rowId);
    }
    const page = keys
      .subarray(0, kept)
      .sort()
      .subarray(rowsBefore, rowsBefore + count);
    return Array.from(page, (key) => this.orders.rowOfKey(search.sortDir, key));
  }

  /** A test of the matches in `matches[0..total)`: each marked with the number of this walk (see {@link marks}). */
  private marked(total: number): (rowId: number) => boolean {
    const { matches, marks } = this;
    this.walks++;
    if (this.walks === 256) {
      marks.fill(0);
      this.walks = 1;
    }
    const walk = this.walks;
    for (let i = 0; i < total; i++) marks[matches[i]] = walk;
    return (rowId) => marks[rowId] === walk;
  }

  /** The page by walking the order from its start (or the keyset's position) and keeping the matches (`isMatch`): for many matches. */
  private walked(
    search: ListingSearch,
    rowsBefore: number,
    count: number,
    priceRange: { min: number; max: number } | undefined,
    isMatch: (rowId: number) => boolean,
  ): number[] {
    const sort = search.sort as Exclude<ListingSearch['sort'], 'DISTANCE'>;
    const order = this.orders.order(sort, search.sortDir);
    // In an order by price, the matches lie between the first listing in the price range and the first past it.
    const { start, end } =
      priceRange && sort === 'PRICE' ? this.priceSpan(order, search.sortDir, priceRange) : { start: 0, end: order.length };
    const page: number[] = [];
    let skip = rowsBefore;
    const from = Math.max(start, search.after ? this.orders.startAfter(sort, search.sortDir, search.after) : 0);
    for (const stretch of order.stretches(from, end)) {
      for (let k = 0, i = stretch.start; k < stretch.count && page.length < count; k++, i += stretch.step) {
        const rowId = order.rowOf(i);
        if (!isMatch(rowId)) continue;
        if (skip > 0) skip--;
        else page.push(rowId);
      }
    }
    return page;
  }

  /**
   * The positions of an order by price (`dir`) whose listings' prices are within the range, by binary search: unknown
   * prices come last in either direction, and are never within it.
   */
  private priceSpan(order: RowOrder, dir: 'ASC' | 'DESC', { min, max }: { min: number; max: number }): { start: number; end: number } {
    const price = this.columns.numbers.price;
    const [before, within] =
      dir === 'ASC' ? [(v: number) => v < min, (v: number) => v <= max] : [(v: number) => v > max, (v: number) => v >= min];
    const first = (test: (v: number) => boolean, from: number) => {
      let [lo, hi] = [from, order.length];
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (test(price[order.at(mid)])) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const start = first(before, 0);
    return { start, end: first(within, start) };
  }
}

/**
 * A test of whether a row lies in one of `ranges` (none of them empty): a binary search among their starts, in row
 * order. What a walk tells a match by when a search has no filter but its ranges'.
 */
function inRanges(ranges: readonly RowRange[]): (rowId: number) => boolean {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const starts = Int32Array.from(sorted, (range) => range.start);
  const ends = Int32Array.from(sorted, (range) => range.end);
  return (rowId) => {
    let [lo, hi] = [0, starts.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid] <= rowId) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 && rowId < ends[lo - 1];
  };
}
