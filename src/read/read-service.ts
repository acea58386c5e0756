import { LRUCache } from 'lru-cache';
import { BOROUGH_IDS, type Area, type AreaTree } from '../domain/area.js';
import type { Building } from '../wire/building.js';
import type { ListingKind } from '../domain/listing.js';
import type { ListingDetail } from '../wire/listing.js';
import { rowToSummary } from '../presenters/listing.js';
import { marketFiguresByRank } from '../domain/market.js';
import type { MarketFigures } from '../wire/market.js';
import { AREAS_SCOPE, scopeKey } from '../store/scopes-repository.js';
import type { ListingSearch } from '../search/listing-search.js';
import { Searcher } from '../search/searcher.js';
import type { ClusterGrid } from '../search/clusters.js';
import type { ListingCluster } from '../wire/cluster.js';
import { COMPARABLE_RADII, similarity } from '../domain/comparables.js';
import type { Outline } from '../domain/outline.js';
import { judgeFreshness } from '../freshness/judge.js';
import type { Freshness } from '../freshness/policy.js';
import type { JudgedScope } from '../freshness/scopes.js';
import { Estimator } from '../estimate/estimator.js';
import { UpstreamDeadline } from './upstream-deadline.js';
import { comparableListings } from './comparable-listings.js';
import { withInventories } from './building-inventories.js';
import type { MirrorDeps, SearchAnswer } from './read-deps.js';
import { ListingDetails } from './listing-details.js';

export type { MirrorDeps, Refresher, SearchAnswer } from './read-deps.js';
import { inSpan } from '../telemetry/spans.js';
import type { Subject } from '../estimate/method.js';
import type { Estimate } from '../wire/estimate.js';

/**
 * Reads of the mirror with the freshness rule applied (DESIGN.md "Freshness"): every answer says how
 * old its data is and whether it is `cached`, `stale` (this request started a refresh) or `refreshing`.
 * A single resource the store lacks is fetched from upstream synchronously, for at most REQUEST_DEADLINE_SECONDS;
 * upstream errors then propagate (UpstreamError; `timeout` past the deadline, the fetch going on in the background). Stored data is always answered, whatever the upstream's state.
 */
export class ReadService {
  /** Area lists by area version and filter, for `readCacheSeconds` (the list changes when areas sync). */
  private readonly areaLists: LRUCache<string, Area[]>;
  /** Runs searches on the store (totals kept or counted, pages read as planned). */
  readonly searcher: Searcher;
  /** Estimates what properties are worth from the active listings (docs/estimates.md). */
  readonly estimator: Estimator;
  /** Whether a refresh may start now (false while the upstream's breaker is open). */
  private readonly canRefresh = () => this.deps.refresher.canRefresh();
  /** Lookups a caller waits for, bounded by REQUEST_DEADLINE_SECONDS. */
  private readonly deadline: UpstreamDeadline;
  /** Listings' details, hydrated while the caller waits when they still lack them. */
  private readonly details: ListingDetails;

  constructor(private readonly deps: MirrorDeps) {
    const ttl = Math.max(1, deps.config.readCacheSeconds * 1000);
    this.deadline = new UpstreamDeadline(deps.config.requestDeadlineSeconds, deps.warn ?? (() => undefined));
    this.areaLists = new LRUCache({ max: 200, ttl });
    this.searcher = new Searcher({
      db: deps.db,
      dialect: deps.dialect,
      listings: deps.listings,
      mortgage: deps.config.mortgage,
      readCacheSeconds: deps.config.readCacheSeconds,
      searchIndex: deps.config.searchIndex,
      clock: deps.clock,
      warn: deps.warn ?? (() => undefined),
      info: deps.info,
    });
    this.estimator = new Estimator({
      db: deps.db,
      listings: deps.listings,
      readCacheSeconds: deps.config.readCacheSeconds,
      refreshSeconds: deps.config.estimateRefreshSeconds,
      clock: deps.clock,
      warn: deps.warn ?? (() => undefined),
    });
    this.details = new ListingDetails({
      ...{ listings: deps.listings, refresher: deps.refresher, config: deps.config, clock: deps.clock },
      ...{ estimator: this.estimator, deadline: this.deadline, canRefresh: this.canRefresh },
      freshness: (key, refreshedAt, threshold, refresh) => this.freshness(key, refreshedAt, threshold, refresh),
      fetchedNow: (threshold) => this.fetchedNow(threshold),
    });
  }

  /**
   * This process's write counts of listings, scopes and areas as one string: it changes with every write
   * this process makes to the mirror, so caches of answers keyed by it show local writes at once.
   */
  get writeCounts(): string {
    return `${this.deps.listings.writeCount}.${this.deps.scopes.writeCount}.${this.deps.areas.writeCount}`;
  }

  private get now(): Date {
    return this.deps.clock();
  }

  /**
   * Judges stored data refreshed at `refreshedAt` under `key`, starting `refresh` in the background if
   * stale. Whether a refresh is running is asked (of every instance) only when the data is old. While
   * the upstream's breaker is open no refresh starts: the answer is `stale` with `refreshTriggered` false.
   */
  private freshness(key: string, refreshedAt: Date, threshold: number, refresh: () => Promise<unknown>): Promise<Freshness> {
    return judgeFreshness(this.deps.coordinator, this.now, key, refreshedAt, threshold, this.canRefresh, refresh);
  }

  /** Freshness of a resource fetched from upstream by this very request. */
  private fetchedNow(threshold: number): Freshness {
    return { dataAge: this.now.toISOString(), source: 'cached', freshnessThreshold: threshold, refreshTriggered: true };
  }

  /** The area tree (see {@link Refresher.areaTree}). */
  areaTree(): Promise<AreaTree> {
    return this.deps.refresher.areaTree();
  }

  /** The listing scopes of `kind` covering these boroughs (all five when none), each refreshed by its sync. */
  private listingScopes(kind: ListingKind, boroughIds: readonly number[]): JudgedScope[] {
    const covered = boroughIds.length ? boroughIds : BOROUGH_IDS;
    return covered.map((boroughId) => ({
      scope: scopeKey(kind, boroughId),
      refresh: () => this.deps.refresher.syncScope(kind, boroughId),
    }));
  }

  /** Freshness of listing data covering `scopes` ({@link listingScopes}): the oldest scope's, stale ones refreshed. */
  private judgeListings(scopes: JudgedScope[]): Promise<Freshness> {
    return this.deps.scopeFreshness.judge(scopes, this.deps.config.freshness.searchSeconds, this.canRefresh);
  }

  /**
   * Active listings of the same kind near a listing, most similar first ({@link similarity}): the
   * radius widens through {@link COMPARABLE_RADII} until `limit` are found. Null when the mirror does
   * not hold the listing; none when its position is unknown.
   */
  async comparables(id: string, limit: number) {
    const subject = await this.deps.listings.findById(id);
    if (!subject) return null;
    const freshness = await this.details.judgeListing(subject);
    return { ...(await comparableListings(this.deps.db, this.deps.dialect, subject, limit, this.now)), freshness };
  }

  /**
   * What a listing of the mirror is worth, from comparable active listings but itself and its copies, with the
   * listing's freshness; null when the mirror does not hold the listing.
   */
  async estimateOfListing(id: string): Promise<{ estimate: Estimate; freshness: Freshness } | null> {
    const subject = await this.deps.listings.findById(id);
    if (!subject) return null;
    const freshness = await this.details.judgeListing(subject);
    return { estimate: await this.estimator.ofListing(subject), freshness };
  }

  /**
   * What a property not listed is worth, from the active listings of its kind, with their freshness (the oldest of
   * the kind's scopes); `off-land` when its point lies on no land of the city.
   */
  async estimateOfProperty(subject: Omit<Subject, 'exclude'>): Promise<{ estimate: Estimate; freshness: Freshness } | 'off-land'> {
    if (this.deps.onLand && !this.deps.onLand(subject.point)) return 'off-land';
    const freshness = await this.judgeListings(this.listingScopes(subject.kind, []));
    return { estimate: await this.estimator.ofProperty(subject), freshness };
  }

  /** Market figures of active listings of `kind` in these areas (expanded; the city when none), optionally some bedroom counts. */
  async market(
    kind: ListingKind,
    areaIds: number[] | undefined,
    boroughIds: number[],
    bedrooms: number[] | undefined,
  ): Promise<{ figures: MarketFigures; freshness: Freshness }> {
    const freshness = await this.judgeListings(this.listingScopes(kind, boroughIds));
    return { figures: await marketFiguresByRank(this.deps.market.ranked(kind, areaIds, bedrooms), this.now), freshness };
  }

  /** Daily snapshots of the figures of `kind` in a borough (0: the city), from `from` to `to` (days, inclusive). */
  async marketHistory(kind: ListingKind, areaId: number, from: string, to: string) {
    const freshness = await this.judgeListings(this.listingScopes(kind, areaId ? [areaId] : []));
    return { days: await this.deps.market.history(kind, areaId, from, to), freshness };
  }

  /**
   * Searches listings of the boroughs `boroughIds` cover (all five when none). `dataAge` is the oldest
   * last successful sync among the covered scopes; stale scopes are refreshed in the background.
   */
  async search(search: ListingSearch, boroughIds: readonly number[], polygon?: Outline): Promise<SearchAnswer> {
    const scopes = this.listingScopes(search.kind, boroughIds);
    // Judged before the page is read, so that `dataAge` never claims newer data than the page holds.
    const freshness = await inSpan('search.freshness', { scopes: scopes.length }, () => this.judgeListings(scopes));
    const found = await inSpan('search.page', { kind: search.kind, sort: search.sort, perPage: search.perPage }, () =>
      this.searcher.find(search, polygon),
    );
    return { items: found.rows.map((r) => rowToSummary(r, this.now)), total: found.total, nextCursor: found.nextCursor, freshness };
  }

  /**
   * The matches of `search` in the boroughs `boroughIds` cover, counted by the cells of `grid`, with the search's
   * freshness ({@link ReadService.search}).
   */
  async clusters(
    search: ListingSearch,
    boroughIds: readonly number[],
    grid: ClusterGrid,
    polygon?: Outline,
  ): Promise<{ cells: ListingCluster[]; freshness: Freshness }> {
    const freshness = await this.judgeListings(this.listingScopes(search.kind, boroughIds));
    return { cells: await this.searcher.clusters(search, grid, polygon), freshness };
  }

  /** One listing's detail by upstream id ({@link ListingDetails.listing}). */
  listing(id: string): Promise<{ listing: ListingDetail; freshness: Freshness } | null> {
    return this.details.listing(id);
  }

  /** Several listings' details by upstream id, from the mirror only ({@link ListingDetails.listingsByIds}). */
  listingsByIds(ids: string[]): Promise<{ listings: ListingDetail[]; missing: string[]; freshness: Freshness }> {
    return this.details.listingsByIds(ids);
  }

  /** One listing's detail by its path on the upstream site ({@link ListingDetails.listingByUrlPath}). */
  listingByUrlPath(path: string): Promise<{ listing: ListingDetail; freshness: Freshness } | null> {
    return this.details.listingByUrlPath(path);
  }

  /** The building with its inventories counted from the mirror's listings in it. */
  private async withInventories(building: Building): Promise<Building> {
    return withInventories(building, await this.deps.listings.unitsOfBuilding(building.id));
  }

  /**
   * One building by id or slug; fetched from upstream (through a listing of it) when not stored; null
   * when neither the mirror nor the upstream has it.
   */
  async building(idOrSlug: string): Promise<{ building: Building; freshness: Freshness } | null> {
    const threshold = this.deps.config.freshness.buildingSeconds;
    const stored = await this.deps.buildings.find(idOrSlug);
    if (stored) {
      const freshness = await this.freshness(`building:${stored.building.id}`, new Date(stored.fetchedAt), threshold, () =>
        this.deps.refresher.refreshBuilding(stored.building.id),
      );
      return { building: await this.withInventories(stored.building), freshness };
    }
    const fetched = await this.deadline.run(`building:${idOrSlug}`, () => this.deps.refresher.refreshBuilding(idOrSlug, 'interactive'));
    if (!fetched) return null;
    return { building: await this.withInventories(fetched), freshness: this.fetchedNow(threshold) };
  }

  /** Areas, optionally of one level and/or one borough, with the freshness of the area list. */
  async areas(filter: { level?: number; borough?: number }): Promise<{ areas: Area[]; freshness: Freshness }> {
    const freshness = await this.deps.scopeFreshness.judge(
      [{ scope: AREAS_SCOPE, refresh: () => this.deps.refresher.syncAreas() }],
      this.deps.config.freshness.areasSeconds,
      this.canRefresh,
    );
    const key = `${this.deps.areas.writeCount}|${filter.level}|${filter.borough}`;
    let areas = this.areaLists.get(key);
    if (!areas) {
      areas = await this.deps.areas.list(filter);
      this.areaLists.set(key, areas);
    }
    return { areas, freshness };
  }
}
