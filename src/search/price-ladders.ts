import { setImmediate as nextTurn } from 'node:timers/promises';
import { LISTING_KINDS, type ListingKind } from '../domain/listing.js';
import type { ActivePrice, ListingsRepository } from '../store/listings-repository.js';
import { VersionedMemo } from '../store/versioned-memo.js';
import { FILTERS, filtersOf } from './filters.js';
import type { ListingSearch } from './listing-search.js';

/**
 * The active listings of one kind and area, by bedroom count (null: unknown): each group's prices in US dollars,
 * ascending; and the area's listings counted by recommended score.
 */
interface AreaLadder {
  bedrooms: (number | null)[];
  prices: Float64Array[];
  /** The area's listings by recommended score: `byScore[score]`, scores 0-100 (domain `recommendedScore`). */
  byScore: Uint32Array;
}

/** The recommended score's values, 0-100 (domain `recommendedScore`). */
const SCORES = 101;

interface Built {
  /** The store's data version (`ListingsRepository.dataVersion`) read before the rows. */
  dataVersion: number;
  /** By `${kind}|${areaId}`. */
  byArea: Map<string, AreaLadder>;
  byKind: Map<string, AreaLadder[]>;
  /** The kind's listings by recommended score (the sum of its areas'). */
  kindByScore: Map<string, Uint32Array>;
}

/** Index of the first price >= `value` (or > `value` when `after`): binary search. */
function bound(prices: Float64Array, value: number, after: boolean): number {
  let lo = 0;
  let hi = prices.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (prices[mid] < value || (after && prices[mid] === value)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Rows a query of a rebuild reads at most: a few milliseconds of the event loop's time on SQLite. */
const DEFAULT_CHUNK_ROWS = 5000;

/**
 * Milliseconds a rebuild reads before it gives the event loop a turn. A turn after every query starved
 * it under load: each waited for the requests queued meanwhile, and while the ladders are not current
 * each of those counts in the store, and under a load of uncached searches a rebuild never ended.
 */
const DEFAULT_SLICE_MS = 10;

function ladderOf(rows: ActivePrice[]): AreaLadder {
  const groups = new Map<number | null, number[]>();
  const byScore = new Uint32Array(SCORES);
  for (const row of rows) {
    byScore[Math.min(SCORES - 1, Math.max(0, Math.round(Number(row.recommended_score))))]++;
    const bedrooms = row.bedroom_count === null ? null : Number(row.bedroom_count);
    let group = groups.get(bedrooms);
    if (!group) groups.set(bedrooms, (group = []));
    group.push(Number(row.price));
  }
  // Sorted here (cheap on rows that came cheapest first): the binary search must not depend on the store's order.
  return { bedrooms: [...groups.keys()], prices: [...groups.values()].map((prices) => Float64Array.from(prices).sort()), byScore };
}

/**
 * Search totals of the commonest search (a kind, some areas, a price range, a bedroom range) counted
 * in memory: for each kind, area and bedroom count, the sorted prices of the active listings, so that
 * a total is a binary search per group (microseconds) where the store visits every matching index
 * entry, a cost that grows with the listings.
 *
 * The ladders hold a copy of the store, so they answer only while it is current: the store's data
 * version (which writes that change listings advance, from any instance) unchanged since they were
 * built, as last read: after this process's latest write, and at most `recheckSeconds` ago otherwise;
 * the same bound as the other read caches' (READ_CACHE_SECONDS). Otherwise the caller counts in the store, and a rebuild starts in the
 * background (one at a time; about a second of CPU at a million listings). The rebuild reads the areas by
 * an index seek each and every area's prices in chunks of at most `chunkRows`, and gives the event loop
 * a turn once it has read for `sliceMs` (0: after each query): on SQLite, whose queries run on the event
 * loop's thread, requests are answered between slices instead of waiting for the whole rebuild.
 * `serve` builds them before it listens ({@link PriceLadders.current}).
 * They also count each area's listings by recommended score, for the planner ({@link PriceLadders.walkEstimate}).
 * Memory: 8 bytes per active listing, and 404 per area.
 */
export class PriceLadders {
  private built: Built | null = null;
  private building: Promise<void> | null = null;
  /**
   * The store's data version: read again after any write by this process (which may have advanced it; a crawl
   * that changed nothing has not), otherwise at most every `recheckSeconds`.
   */
  private readonly dataVersion: VersionedMemo<number>;
  /** When (performance.now(), ms) the rebuild's current slice began. */
  private sliceStart = 0;

  constructor(
    private readonly listings: ListingsRepository,
    recheckSeconds: number,
    private readonly chunkRows = DEFAULT_CHUNK_ROWS,
    private readonly sliceMs = DEFAULT_SLICE_MS,
  ) {
    this.dataVersion = new VersionedMemo(recheckSeconds, () => listings.version, () => listings.dataVersion());
  }

  /** Builds the ladders unless they are current, and waits for them (a failed build is left to the next search, as in {@link PriceLadders.total}). */
  async current(): Promise<void> {
    if (!(await this.currentOrRebuild())) await this.building;
  }

  /** Whether the ladders can count `search`: it sets no filter beyond kind, areas, price and bedrooms. */
  static counts(search: ListingSearch): boolean {
    return filtersOf(search).every(([name]) => FILTERS[name].countedInMemory);
  }

  /**
   * The number of active listings matching `search`, or undefined when the ladders cannot count it (see
   * {@link PriceLadders.counts}) or are not current; a rebuild is then started when they are not.
   */
  async total(search: ListingSearch): Promise<number | undefined> {
    if (!PriceLadders.counts(search)) return undefined;
    const built = await this.currentOrRebuild();
    return built ? countIn(built, search) : undefined;
  }

  /**
   * For the planner (`pageStrategy`), about how many entries of the order's index a walk passes to the end of
   * the search's page, given its exact `total`: a function, so that it is worked out only when it can change
   * how the page is read. The page's matches may sit anywhere in the order: an area's listings share a band of
   * recommended scores (the transit score is the area's), listings with many bedrooms the dear end of the
   * prices. So:
   * - by price, exactly: the kind's listings between where the walk starts (the first listing, or the price
   *   bound that starts its index range) and the page's last match's price;
   * - in the default order, from the areas' listings by recommended score, taking the price and bedroom
   *   filters to match alike at every score of an area: the kind's listings scored before the score where
   *   the page's last match falls, and that score's listings in proportion.
   * Undefined when the ladders cannot count the search or are not current, for other orders, and for keyset
   * pages (the walk starts at the cursor): the planner then takes the matches as spread evenly.
   */
  async walkEstimate(search: ListingSearch, total: number): Promise<(() => number) | undefined> {
    if (search.after || (search.sort !== 'PRICE' && search.sort !== 'RECOMMENDED') || !PriceLadders.counts(search)) return undefined;
    const built = await this.currentOrRebuild();
    if (!built) return undefined;
    const last = search.page * search.perPage;
    return () => (search.sort === 'PRICE' ? priceWalk(built, search, total, last) : scoreWalk(built, search, total, last));
  }

  /** The ladders when they match the store's data version; otherwise null, and a rebuild is started. */
  private async currentOrRebuild(): Promise<Built | null> {
    const built = this.built;
    if (built && built.dataVersion === (await this.dataVersion.get())) return built;
    this.rebuild();
    return null;
  }

  /** Active listings of `kind` in the mirror's areas, or undefined when the ladders are not current (as {@link PriceLadders.total}). */
  async activeOfKind(kind: ListingKind): Promise<number | undefined> {
    // From the kind's listings by score (101 counts), not a count across every price group: every search asks it.
    const built = await this.currentOrRebuild();
    return built ? sumOf(built.kindByScore.get(kind)) : undefined;
  }

  private rebuild(): void {
    if (this.building) return;
    this.building = this.build()
      // A failed build (the store closing, a lost connection) leaves the counting to the store; the next search tries again.
      .catch(() => undefined)
      .finally(() => (this.building = null));
  }

  private async build(): Promise<void> {
    const localVersion = this.listings.version;
    // Read before the rows: a write that lands during the build advances it past this reading, so the
    // next check (at once for a write of this process) sees the ladders as behind and rebuilds them.
    const dataVersion = await this.listings.dataVersion();
    this.sliceStart = performance.now();
    const byArea = new Map<string, AreaLadder>();
    const byKind = new Map<string, AreaLadder[]>();
    const kindByScore = new Map<string, Uint32Array>();
    for (const kind of LISTING_KINDS) {
      const areas = await this.listings.activeAreas(kind);
      await this.breathe();
      const ofKind: AreaLadder[] = [];
      for (const areaId of areas) {
        const ladder = ladderOf(await this.pricesOf(kind, areaId));
        byArea.set(`${kind}|${areaId}`, ladder);
        ofKind.push(ladder);
      }
      byKind.set(kind, ofKind);
      kindByScore.set(kind, scoresOf(ofKind));
    }
    this.built = { dataVersion, byArea, byKind, kindByScore };
    this.dataVersion.keep(dataVersion, localVersion);
  }

  /** Gives the event loop a turn once the current slice has lasted `sliceMs`; a new slice starts after it. */
  private async breathe(): Promise<void> {
    if (performance.now() - this.sliceStart < this.sliceMs) return;
    await nextTurn();
    this.sliceStart = performance.now();
  }

  /**
   * Every active price of `kind` in one area, cheapest first, read `chunkRows` at a time, the event loop
   * given a turn between reads as {@link PriceLadders.breathe} says. A chunk ends before its last price (whose listings may go on past
   * it), which the next chunk starts at; a chunk all of one price is followed by every listing of that
   * price, then by the prices above it.
   */
  private async pricesOf(kind: ListingKind, areaId: number | null): Promise<ActivePrice[]> {
    const rows: ActivePrice[] = [];
    let range: { min?: number; minExclusive?: boolean } = {};
    for (;;) {
      const chunk = await this.listings.activePrices(kind, areaId, { ...range, limit: this.chunkRows });
      await this.breathe();
      if (chunk.length < this.chunkRows) {
        for (const row of chunk) rows.push(row);
        return rows;
      }
      const last = chunk[chunk.length - 1].price;
      let keep = chunk.length;
      while (keep > 0 && chunk[keep - 1].price === last) keep--;
      for (let i = 0; i < keep; i++) rows.push(chunk[i]);
      if (keep > 0) {
        range = { min: last };
        continue;
      }
      for (const row of await this.listings.activePrices(kind, areaId, { min: last, max: last })) rows.push(row);
      await this.breathe();
      range = { min: last, minExclusive: true };
    }
  }
}

/** Counts `search` (a countable one) in `built`: the store's rule, `price` and `bedroom_count` compared as in SQL (unknown bedrooms match no bound). */
function countIn(built: Built, search: ListingSearch): number {
  const ladders = laddersOf(built, search);
  const { minBeds, maxBeds, minPrice, maxPrice } = search;
  let total = 0;
  for (const ladder of ladders) {
    for (let i = 0; i < ladder.bedrooms.length; i++) {
      const bedrooms = ladder.bedrooms[i];
      if (minBeds !== undefined && (bedrooms === null || bedrooms < minBeds)) continue;
      if (maxBeds !== undefined && (bedrooms === null || bedrooms > maxBeds)) continue;
      const prices = ladder.prices[i];
      const upTo = maxPrice === undefined ? prices.length : bound(prices, maxPrice, true);
      const from = minPrice === undefined ? 0 : bound(prices, minPrice, false);
      if (upTo > from) total += upTo - from;
    }
  }
  return total;
}

/** The ladders of a search's kind and areas (every area of the kind when it names none). */
function laddersOf(built: Built, search: ListingSearch): AreaLadder[] {
  if (!search.areaIds) return built.byKind.get(search.kind) ?? [];
  return [...new Set(search.areaIds)].map((id) => built.byArea.get(`${search.kind}|${id}`)).filter((l): l is AreaLadder => l !== undefined);
}

/** The sum of a count by score (0 for none). */
function sumOf(byScore: Uint32Array | undefined): number {
  return byScore ? byScore.reduce((sum, n) => sum + n, 0) : 0;
}

/** The listings of `ladders` by recommended score, summed. */
function scoresOf(ladders: AreaLadder[]): Uint32Array {
  const sum = new Uint32Array(SCORES);
  for (const ladder of ladders) for (let score = 0; score < SCORES; score++) sum[score] += ladder.byScore[score];
  return sum;
}

/**
 * Index entries a walk by price passes to the page's `last` match, or to the end of its range when the search has
 * fewer (`total`): the kind's listings in the search's price bounds (which start the walk's range) up to the
 * price of that match, found by bisection to within a dollar.
 */
function priceWalk(built: Built, search: ListingSearch, total: number, last: number): number {
  const { kind, minPrice, maxPrice } = search;
  const ofKind = (min: number | undefined, max: number | undefined) => countIn(built, { kind, minPrice: min, maxPrice: max } as ListingSearch);
  if (total < last) return ofKind(minPrice, maxPrice);
  const matches = (min: number | undefined, max: number | undefined) => countIn(built, { ...search, minPrice: min, maxPrice: max });
  let highest = 0;
  for (const ladder of built.byKind.get(kind) ?? []) for (const prices of ladder.prices) highest = Math.max(highest, prices[prices.length - 1] ?? 0);
  // lo matches fewer than `last`, hi at least `last`: counted up from the cheapest, or down from the dearest.
  if (search.sortDir === 'ASC') {
    let [lo, hi] = [(minPrice ?? 0) - 1, maxPrice ?? highest];
    while (hi - lo > 1) {
      const mid = (lo + hi) / 2;
      if (matches(minPrice, Math.min(mid, maxPrice ?? Infinity)) >= last) hi = mid;
      else lo = mid;
    }
    return ofKind(minPrice, hi);
  }
  let [lo, hi] = [(maxPrice ?? highest) + 1, minPrice ?? 0];
  while (lo - hi > 1) {
    const mid = (lo + hi) / 2;
    if (matches(Math.max(mid, minPrice ?? -Infinity), maxPrice) >= last) hi = mid;
    else lo = mid;
  }
  return ofKind(hi, maxPrice);
}

/**
 * Index entries a walk in the default order passes to the page's `last` match (see {@link PriceLadders.walkEstimate}):
 * the search's areas' listings by score, each score's share of the `total` matches in proportion to them.
 */
function scoreWalk(built: Built, search: ListingSearch, total: number, last: number): number {
  const ofKind = built.kindByScore.get(search.kind) ?? new Uint32Array(SCORES);
  const inAreas = search.areaIds ? scoresOf(laddersOf(built, search)) : ofKind;
  const listings = sumOf(inAreas);
  const share = listings > 0 ? total / listings : 0;
  let [matched, passed] = [0, 0];
  for (let i = 0; i < SCORES; i++) {
    const score = search.sortDir === 'ASC' ? i : SCORES - 1 - i;
    const here = share * inAreas[score];
    if (matched + here >= last && here > 0) return passed + (ofKind[score] * (last - matched)) / here;
    matched += here;
    passed += ofKind[score];
  }
  return passed;
}
