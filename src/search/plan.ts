/**
 * The search's planner: how a page is read, decided from the search, its exact total and the context before any
 * statement runs (pure). query.ts writes the statements the plan says, and its `searchListings` runs the stages:
 * the count, the plan, the page.
 */
import { lowestRecommendedScore } from '../domain/recommended-score.js';
import { filtersOf, HELD_BY_ORDER_INDEX, YES_NO_FILTERS, type YesNoFilter } from './filters.js';
import type { ListingSearch, SearchContext } from './listing-search.js';
import type { IndexedSort, SortColumn } from './sorts.js';

/** Whether a point, a box or a list of ids drives the search's page (the spatial index or the ids), not an order's index. */
const drivenByPlaceOrIds = (s: ListingSearch) => s.sort === 'DISTANCE' || !!s.near || !!s.bbox || !!s.ids;

/** Whether a search asks for the yes side of a yes/no filter (one that a partial index serves). */
const asksYes = (s: ListingSearch) => YES_NO_FILTERS.some((name) => s[name] === true);

/**
 * The first yes/no filter a search asks the no side of (`false`: unknown or 0), if any. Its count has no
 * index (SQLite visits every active listing of the kind), where its yes side has a partial index.
 */
export function noSideFilter(s: ListingSearch): YesNoFilter | undefined {
  return YES_NO_FILTERS.find((name) => s[name] === false);
}

/**
 * How much cheaper a walk passes an index entry that holds every filter than a sort reads and sorts a
 * match, as measured at a million listings on SQLite (commit 28034ed).
 */
const HELD_ENTRY_SPEEDUP = 20;

/** How a page is read (see {@link pageStrategy}). */
export type PageStrategy = 'empty' | 'walk' | 'sort' | 'planner';

/**
 * How a page is read, from the search's exact total (on PostgreSQL a `walk` names no index: query.ts's `deferredPage`):
 * - `empty`: the page starts past the last match (no match at all, say), so there is nothing to read;
 * - `sort`: few matches: read them through the filters' best index and sort them. A walk of the order's
 *   index passes `walkEntries()` entries where the price ladders can say where the matches sit in the order
 *   (an area's listings bunch in the default order, many bedrooms at the dear end of the prices), else about
 *   (rows before the page + perPage) x activeOfKind / total, as if the matches were spread through the order;
 *   a sort visits `total`: this is taken when it costs no more, an entry that holds every filter costing a
 *   {@link HELD_ENTRY_SPEEDUP}th of a sorted match;
 * - `walk` the order's index to the end of the page when each filter is tested on its entries (area,
 *   bedrooms and price on every order, dates on the date orders, size on price per square foot, no fee on
 *   the default order: {@link HELD_BY_ORDER_INDEX}):
 *   no row is read but the page's, so even matches bunched far down the order cost little;
 * - otherwise the `planner`'s choice, as for a geographic or id filter (the spatial index or the id
 *   list drive those), the distance order, or an unknown `activeOfKind`.
 *
 * Why: SQLite's statistics cannot tell its planner that a filter matches nothing here or that two columns
 * are tied. At a million listings it walked every sale by listing date for a search that matched none,
 * sorted tens of thousands of rentals to show fifty, and walked the price order for a few sales (figures
 * in commit 6c47169). A walk is not forced when a filter needs the row (bathrooms, amenities, a monthly
 * cost...): such a filter may be tied to the order, and a walk that reads the row of every entry it passes
 * can then pass far more rows than the planner's sort reads.
 */
export function pageStrategy(s: ListingSearch, total: number, activeOfKind: number | undefined, walkEntries?: () => number): PageStrategy {
  const rowsBefore = s.after ? 0 : (s.page - 1) * s.perPage;
  if (!s.after && total <= rowsBefore) return 'empty';
  if (activeOfKind === undefined || drivenByPlaceOrIds(s)) return 'planner';
  const filters = filtersOf(s);
  const held = filters.length > 0 && filters.every(([name]) => HELD_BY_ORDER_INDEX[s.sort as IndexedSort].has(name));
  // Entries a walk passes cost what a sorted match does (a row read) unless the index holds every filter.
  const entryCost = held ? 1 / HELD_ENTRY_SPEEDUP : 1;
  // A walk passes at most every entry of the kind: past that bound the estimate cannot make a sort the cheaper.
  const passed = total <= activeOfKind * entryCost && walkEntries ? walkEntries() : ((rowsBefore + s.perPage) * activeOfKind) / total;
  if (total <= passed * entryCost) return 'sort';
  return held ? 'walk' : 'planner';
}

/**
 * The highest asking price (dollars) whose monthly cost can be at most `maxMonthlyCost` dollars, with monthly
 * payment `factor` per dollar of price (domain `mortgageFactor`): a sale's monthly charges are never negative
 * (domain `monthlyCharges`), so price x factor must be within the maximum alone. Taken a billionth above
 * maxMonthlyCost / factor, as the database rounds price x factor. Infinity when the factor is 0 (nothing
 * borrowed: no bound).
 */
export function highestPriceWithin(maxMonthlyCost: number, factor: number): number {
  if (!(factor > 0)) return Infinity;
  return Math.floor((maxMonthlyCost / factor) * (1 + 1e-9));
}

/** A condition on the leading key of a page's order that the search's filters imply: `column op value`. */
export type OrderBound = { column: 'price_per_sqft'; op: 'is not'; value: null } | { column: Extract<SortColumn, 'price' | 'recommended_score'>; op: '<=' | '>='; value: number };

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
 *   walked every dearer sale before the first match;
 * - a minimum transit score puts a floor under the recommended score ({@link lowestRecommendedScore}): the
 *   default order ascending walked every listing scored below it first.
 */
export function orderBounds(s: ListingSearch, ctx: SearchContext): OrderBound[] {
  const bounds: OrderBound[] = [];
  if (s.sort === 'PRICE_PER_SQFT' && s.minSqft !== undefined && s.minSqft > 0) bounds.push({ column: 'price_per_sqft', op: 'is not', value: null });
  if (s.sort === 'PRICE' && s.maxMonthlyCost !== undefined) {
    const highest = highestPriceWithin(s.maxMonthlyCost, ctx.mortgageFactor);
    if (Number.isFinite(highest)) bounds.push({ column: 'price', op: '<=', value: highest });
  }
  if (s.sort === 'RECOMMENDED' && s.minTransitScore !== undefined) bounds.push({ column: 'recommended_score', op: '>=', value: lowestRecommendedScore(s.minTransitScore) });
  return bounds;
}

/** How a search's page is read, decided before any row is. */
export interface SearchPlan {
  /** The search's exact total, which the plan was weighed by. */
  total: number;
  read: PageStrategy;
  /**
   * A yes/no filter's partial index serves the count, and a sort of few matches; any other page must not be
   * read through it (SQLite took it for every rental with no fee and sorted them all for one page).
   */
  flagsByIndex: boolean;
  /** A walk, or a page with amenities as sets, on PostgreSQL reads the page's ids first, from the order's index alone (query.ts's `deferredPage`). */
  idsFirst: boolean;
  /**
   * The planner's page with amenities walks the order's index, testing each entry against the set of each
   * amenity's listings, read once, instead of joining (filters.ts's `amenities`): the set needs only the entry's
   * id, which the index holds (on PostgreSQL with the ids first, on SQLite as its rowid before it reads the
   * row). Joined, both databases read every listing with the amenity and sorted them for each page. Not for a
   * sort of few matches, which the amenity's listings drive, nor where a point, a box or ids drive the page.
   */
  amenitiesAsSet: boolean;
  /** Conditions on the order's leading key that the filters imply ({@link orderBounds}); none for `DISTANCE`. */
  orderBounds: OrderBound[];
}

/** The plan of a search's page, from its exact total and the context. */
export function planPage(s: ListingSearch, total: number, ctx: SearchContext): SearchPlan {
  const read = pageStrategy(s, total, ctx.activeOfKind, ctx.walkEntries);
  const amenitiesAsSet = read === 'planner' && !!s.amenities?.length && !drivenByPlaceOrIds(s);
  return {
    total,
    read,
    flagsByIndex: read === 'sort' || !asksYes(s),
    idsFirst: ctx.dialect === 'postgres' && (read === 'walk' || amenitiesAsSet),
    amenitiesAsSet,
    orderBounds: orderBounds(s, ctx),
  };
}
