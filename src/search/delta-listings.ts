import type { Outline } from '../domain/outline.js';
import type { SummaryRow } from '../store/listing-rows.js';
import type { ListingCluster } from '../wire/cluster.js';
import { clustersOfSums, type CellSums, type ClusterGrid } from './clusters.js';
import { IndexedListings, rowsBefore, type IndexedPage } from './indexed-listings.js';
import { summaryRowAt, type ListingColumns } from './listing-columns.js';
import type { ListingSearch, SearchContext } from './listing-search.js';

/** One kind's listings as the search index answers from them: as built ({@link IndexedListings}), or with a delta of the listings written since ({@link ListingsWithDelta}). */
export interface SearchableListings {
  /** Active listings held. */
  readonly size: number;
  /** The page `search` asks for; undefined when only the store answers it ({@link IndexedListings.page}). */
  page(search: ListingSearch, ctx: SearchContext, polygon?: Outline): IndexedPage | undefined;
  /** The search's matches counted by the cells of `grid`; undefined as {@link page} ({@link IndexedListings.clusters}). */
  clusters(search: ListingSearch, ctx: SearchContext, grid: ClusterGrid, polygon?: Outline): ListingCluster[] | undefined;
}

/**
 * One kind's listings after writes since its columns were built: the built listings less those written since (`stale`,
 * a bit set by row), and those written since that are active, in columns of their own (`recent`, the delta, built
 * from their rows alone). A search runs on both and merges them: the total is the sum, the page the first rows of both in the
 * search's order (no listing is in both), a map cell's figures both cells' together. The same answers as columns built
 * again from the whole store (test/search/search-index.test.ts), for the cost of reading the rows written.
 */
export class ListingsWithDelta implements SearchableListings {
  readonly size: number;

  private constructor(
    private readonly built: IndexedListings,
    private readonly stale: Uint32Array,
    staleActive: number,
    private readonly recent: IndexedListings,
  ) {
    this.size = built.size - staleActive + recent.size;
  }

  /**
   * `built` with a delta of the listings written since it was built: `written`, the id of every listing written (of any
   * kind or status), and `recent`, the columns of those of this kind that are active.
   */
  static of(built: IndexedListings, written: readonly string[], recent: ListingColumns): ListingsWithDelta {
    const stale = new Uint32Array((built.size >>> 5) + 1);
    let staleActive = 0;
    for (const id of written) {
      const rowId = built.orders.rowOfId(id);
      if (rowId === undefined || (stale[rowId >>> 5] >>> (rowId & 31)) & 1) continue;
      stale[rowId >>> 5] |= 1 << (rowId & 31);
      staleActive++;
    }
    return new ListingsWithDelta(built, stale, staleActive, new IndexedListings(recent));
  }

  page(search: ListingSearch, ctx: SearchContext, polygon?: Outline): IndexedPage | undefined {
    if (search.sort === 'DISTANCE') return undefined;
    const skip = rowsBefore(search);
    const wanted = skip + search.perPage;
    // Each side's first `wanted` matches: the merged page is among them.
    const old = this.built.window(search, ctx, polygon, 0, wanted, this.stale);
    const fresh = this.recent.window(search, ctx, polygon, 0, wanted);
    if (!old || !fresh) return undefined;
    const { sort, sortDir } = search;
    const rows: SummaryRow[] = [];
    let [i, j] = [0, 0];
    for (let n = 0; n < wanted && (i < old.rowIds.length || j < fresh.rowIds.length); n++) {
      const fromBuilt =
        j === fresh.rowIds.length ||
        (i < old.rowIds.length &&
          !this.built.orders.comesAfter(sort, sortDir, old.rowIds[i], this.recent.orders.positionOf(sort, fresh.rowIds[j])));
      const [columns, rowId] = fromBuilt ? [this.built.columns, old.rowIds[i++]] : [this.recent.columns, fresh.rowIds[j++]];
      if (n >= skip) rows.push(summaryRowAt(columns, rowId));
    }
    return { rows, total: old.total + fresh.total };
  }

  clusters(search: ListingSearch, ctx: SearchContext, grid: ClusterGrid, polygon?: Outline): ListingCluster[] | undefined {
    const old = this.built.cellSums(search, ctx, grid, polygon, this.stale);
    const fresh = this.recent.cellSums(search, ctx, grid, polygon);
    return old && fresh && clustersOfSums(grid, mergedCells(old, fresh));
  }
}

/** Two lists of cells, each south to north and west to east within a row, as one in that order: a cell in both added up. */
function mergedCells(a: readonly CellSums[], b: readonly CellSums[]): CellSums[] {
  const out: CellSums[] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    const order = i === a.length ? 1 : j === b.length ? -1 : a[i].y - b[j].y || a[i].x - b[j].x;
    if (order < 0) out.push(a[i++]);
    else if (order > 0) out.push(b[j++]);
    else {
      const [p, q] = [a[i++], b[j++]];
      out.push({
        x: p.x,
        y: p.y,
        count: p.count + q.count,
        latitude: p.latitude + q.latitude,
        longitude: p.longitude + q.longitude,
        minPrice: Math.min(p.minPrice, q.minPrice),
        maxPrice: Math.max(p.maxPrice, q.maxPrice),
      });
    }
  }
  return out;
}
