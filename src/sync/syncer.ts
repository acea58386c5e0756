import { AreaTree, BOROUGH_IDS } from '../domain/area.js';
import type { Building } from '../wire/building.js';
import { inSpan } from '../telemetry/spans.js';
import { LISTING_CHANGE_RULES } from './listing-changes.js';
import { ScopeCrawler, type ScopeCrawlerDeps } from './scope-crawler.js';
import { LISTING_KINDS, type ListingKind } from '../domain/listing.js';
import { newCrawlId } from '../store/crawl-staging.js';
import type { Station } from '../domain/transit-score.js';
import type { Districts } from '../domain/city-districts.js';
import type { GeoPoint } from '../wire/common.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { BuildingsRepository } from '../store/buildings-repository.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { ApplyResult } from '../store/listing-writes.js';
import type { ChangesRepository } from '../store/changes-repository.js';
import type { MarketRepository } from '../store/market-repository.js';
import { AREAS_SCOPE, scopeFailing, scopeKey, type CrawlReport, type ScopesRepository } from '../store/scopes-repository.js';
import type { UpstreamPriority } from '../upstream/client.js';
import { mapAreas, mapSearchNode, searchNodeOfDetail } from '../upstream/mappers.js';
import type { Metrics } from '../metrics/metrics.js';
import { SingleFlight } from '../lib/single-flight.js';
import { Hydrator, type HydrationProgress, type SyncProgress } from './hydrator.js';
import { listingDeriver, recordMarketFigures } from './derived-figures.js';

/** A crawl that would take more than this share of a scope off the market is not trusted to sweep. */
const MAX_SWEEP_SHARE = 0.5;

/** What a syncer works with; the upstream client, result cap, clock and logger as its crawls need them. */
export interface SyncerDeps extends ScopeCrawlerDeps {
  listings: ListingsRepository;
  areas: AreasRepository;
  buildings: BuildingsRepository;
  scopes: ScopesRepository;
  market: MarketRepository;
  changes: ChangesRepository;
  /** Days the change feed keeps its events. */
  changesRetentionDays: number;
  stations: readonly Station[];
  /** The districts holding a position (the city's polygons), stored with each listing for the district filters. */
  districtsAt: (point: GeoPoint | null) => Districts;
  /** Listings hydrated per detail request (aliased fields), and at most right after a scope's refresh. */
  hydrationBatch: number;
  hydrationBudget: number;
  /** Failed detail requests after which a listing is parked. */
  hydrationMaxFailures: number;
  /** Detail batches in flight at once in a hydration run (the upstream client's concurrency; default 1). */
  hydrationLanes?: number;
  /** Where each scope's sync is timed by outcome, and failed detail batches counted. */
  metrics?: Metrics;
}

export type { HydrationProgress, SyncProgress } from './hydrator.js';

/** Every listing scope: both kinds in each of the five boroughs. */
export const LISTING_SCOPES: { kind: ListingKind; boroughId: number }[] = (['sale', 'rental'] as const).flatMap((kind) =>
  BOROUGH_IDS.map((boroughId) => ({ kind, boroughId })),
);

/**
 * Brings the mirror up to date from the upstream: the area list, whole scopes (kind x borough, split
 * into parts under the site's result cap), and the details of new or changed listings (hydration).
 * A crawl is staged in the store as its pages arrive and applied only when every part arrived, in one
 * transaction; a failure records the error on the scope, discards what was staged and changes no stored listing.
 */
export class Syncer {
  /** The area sync under way, if any: callers finding no areas stored share it. */
  private readonly areasSync = new SingleFlight<'areas', AreaTree>();
  private readonly reports = new Map<string, CrawlReport>();
  private readonly crawler: ScopeCrawler;
  private readonly hydrator: Hydrator;
  /** What a sync stores with each listing beyond what the site gives ({@link listingDeriver}). */
  private readonly derive: ReturnType<typeof listingDeriver>;

  constructor(private readonly deps: SyncerDeps) {
    this.crawler = new ScopeCrawler(deps);
    this.hydrator = new Hydrator({ ...deps, areaTree: () => this.areaTree() });
    this.derive = listingDeriver(deps.stations, deps.districtsAt);
  }

  private now(): string {
    return this.deps.clock().toISOString();
  }

  /** Whether a refresh may start now: not while the upstream's circuit breaker refuses calls. */
  canRefresh(): boolean {
    return this.deps.client.circuitState() !== 'open';
  }

  /** The last crawl report of each scope (parts and splits), for /v1/health. */
  crawlReports(): CrawlReport[] {
    return [...this.reports.values()];
  }

  /** The area tree from the store (kept in memory by the repository), synced from upstream first if the store has none. */
  async areaTree(): Promise<AreaTree> {
    const stored = await this.deps.areas.tree();
    if (stored.areas.length) return stored;
    return this.areasSync.run('areas', () => this.syncAreas());
  }

  /** Replaces the stored area list with the upstream's; returns the tree it made. */
  async syncAreas(): Promise<AreaTree> {
    const at = this.now();
    const t0 = performance.now();
    try {
      const areas = mapAreas(await this.deps.client.areas());
      if (areas.length === 0) throw new Error('upstream returned no NYC areas');
      await this.deps.areas.replaceAll(areas);
      await this.deps.scopes.recordSuccess(AREAS_SCOPE, at, areas.length);
      this.deps.metrics?.syncDuration.observe({ scope: AREAS_SCOPE, outcome: 'success' }, (performance.now() - t0) / 1000);
      return new AreaTree(areas);
    } catch (error) {
      this.deps.metrics?.syncDuration.observe({ scope: AREAS_SCOPE, outcome: 'failure' }, (performance.now() - t0) / 1000);
      await this.deps.scopes.recordFailure(AREAS_SCOPE, at, (error as Error).message);
      throw error;
    }
  }

  /**
   * Crawls one scope and applies it: upserts, price events, and (every part of the crawl being
   * complete) takes listings it no longer contains off the market. Then hydrates new and changed
   * listings within the budget.
   * @throws UpstreamError (after recording it on the scope) when a page fails.
   */
  syncScope(kind: ListingKind, boroughId: number, options: { hydrate?: boolean } = {}): Promise<ApplyResult> {
    // A trace of its own: a sync a request started in the background is not that request's work.
    return inSpan('sync.scope', { scope: scopeKey(kind, boroughId) }, () => this.syncScopeTraced(kind, boroughId, options), { root: true });
  }

  private async syncScopeTraced(kind: ListingKind, boroughId: number, options: { hydrate?: boolean }): Promise<ApplyResult> {
    const scope = scopeKey(kind, boroughId);
    const started = this.now();
    const t0 = performance.now();
    await this.deps.scopes.recordAttempt(scope, started);
    const crawlId = newCrawlId();
    const staging = this.deps.listings.staging;
    try {
      const tree = await this.areaTree();
      await staging.discardLeftovers();
      const sink = staging.sink(crawlId);
      const { parts, splits, complete } = await inSpan('sync.crawl', { scope }, () => this.crawler.crawl(kind, boroughId, tree, sink));
      const seen = await staging.count(crawlId);
      const stored = await this.deps.scopes.get(scope);
      const storedCount = stored?.listing_count ?? 0;
      const trustSweep = complete && (storedCount === 0 || seen >= storedCount * (1 - MAX_SWEEP_SHARE));
      if (!trustSweep)
        this.deps.logger.warn(
          { scope, seen, storedCount, complete },
          'crawl incomplete or much smaller than the stored scope: not sweeping',
        );
      const at = this.now();
      const result = await inSpan('sync.write', { scope, listings: seen }, () =>
        this.deps.listings.applyStaged(crawlId, this.derive, LISTING_CHANGE_RULES, at, trustSweep ? { sweep: { kind, boroughId } } : {}),
      );
      await this.deps.scopes.recordSuccess(scope, at, seen);
      this.reports.set(scope, { scope, parts, splits, complete, at });
      await this.deps.changes.prune(new Date(this.deps.clock().getTime() - this.deps.changesRetentionDays * 86_400_000).toISOString());
      this.deps.logger.info({ scope, listings: seen, ...result }, 'scope synced');
      this.deps.metrics?.syncDuration.observe({ scope, outcome: 'success' }, (performance.now() - t0) / 1000);
      // The day's figures are taken once the new listings' dates are in (hydration), so their days on
      // market count; a failed hydration still leaves the figures of what was crawled.
      try {
        if (options.hydrate ?? true) await this.hydrateBacklog(this.deps.hydrationBudget, kind);
      } finally {
        await this.recordMarket(kind, boroughId, tree);
      }
      return result;
    } catch (error) {
      this.deps.metrics?.syncDuration.observe({ scope, outcome: 'failure' }, (performance.now() - t0) / 1000);
      // What the crawl staged goes; if the store refuses that too, a later sync clears it (`discardLeftovers`).
      await staging
        .discard(crawlId)
        .catch((err: Error) => this.deps.logger.warn({ scope, err: err.message }, "a failed crawl's staged rows stay"));
      const message = (error as Error).message;
      const before = await this.deps.scopes.get(scope);
      await this.deps.scopes.recordFailure(scope, this.now(), message);
      // A failure is news when the scope was healthy or failed otherwise; a repeat is logged at debug.
      const repeat = before !== undefined && scopeFailing(before) && before.last_error === message;
      this.deps.logger[repeat ? 'debug' : 'warn']({ scope, err: message }, 'scope sync failed');
      throw error;
    }
  }

  /** Records today's market figures of the borough, and of the whole city unless `withCity` is false ({@link recordMarketFigures}). */
  private recordMarket(kind: ListingKind, boroughId: number, tree: AreaTree, withCity = true): Promise<void> {
    return recordMarketFigures(this.deps.market, this.deps.clock(), { kind, boroughId, tree, withCity });
  }

  /**
   * Areas, then every listing scope in turn, then (unless `hydrate` is false) the whole hydration
   * backlog. Returns the scopes that failed (empty when all succeeded).
   */
  async syncAll(options: { hydrate?: boolean; progress?: SyncProgress } = {}): Promise<string[]> {
    const failed: string[] = [];
    const progress = options.progress ?? (() => undefined);
    try {
      await this.syncAreas();
    } catch {
      failed.push(AREAS_SCOPE);
      if (!(await this.deps.areas.tree()).areas.length) return failed;
    }
    for (const [i, { kind, boroughId }] of LISTING_SCOPES.entries()) {
      progress('scopes', i, LISTING_SCOPES.length);
      try {
        await this.syncScope(kind, boroughId, { hydrate: false });
      } catch {
        failed.push(scopeKey(kind, boroughId));
      }
    }
    progress('scopes', LISTING_SCOPES.length, LISTING_SCOPES.length);
    if (options.hydrate ?? true) {
      try {
        await this.hydrateBacklog(Infinity, undefined, 'background', progress);
      } catch {
        failed.push('hydration');
      }
      // The figures each scope recorded lacked the listing dates only hydration brings: taken again.
      await this.recordMarkets();
    }
    return failed;
  }

  /** Records today's market figures of every scope from what the mirror holds (after a hydration of the backlog). */
  async recordMarkets(): Promise<void> {
    const tree = await this.areaTree();
    // The city's figures once a kind, with its last borough, not once a borough.
    for (const [i, { kind, boroughId }] of LISTING_SCOPES.entries())
      await this.recordMarket(kind, boroughId, tree, LISTING_SCOPES[i + 1]?.kind !== kind);
  }

  /** Hydrates up to `budget` listings waiting for their details ({@link Hydrator.hydrateBacklog}). */
  hydrateBacklog(budget: number, kind?: ListingKind, priority: UpstreamPriority = 'background', progress?: SyncProgress): Promise<number> {
    return this.hydrator.hydrateBacklog(budget, kind, priority, progress);
  }

  /** How many active listings wait for hydration. */
  backlog(): Promise<number> {
    return this.hydrator.backlog();
  }

  /** How many active listings are parked (their details failed `hydrationMaxFailures` times). */
  parked(): Promise<number> {
    return this.hydrator.parked();
  }

  /** Hydration's state in this process, for /v1/health and the metrics. */
  hydrationProgress(): HydrationProgress {
    return this.hydrator.progress();
  }

  /** Fetches and stores the details of these listings ({@link Hydrator.hydrate}); returns the ids the site had no detail for. */
  hydrate(kind: ListingKind, ids: string[], priority: UpstreamPriority = 'background'): Promise<string[]> {
    return this.hydrator.hydrate(kind, ids, priority);
  }

  /**
   * Fetches one listing from upstream (as the given kind, else as a rental, then as a sale) and stores
   * it: hydrated when stored already, else created from its detail (the next crawl adds what only a
   * search node has). `interactive` when a caller waits for it. Returns false when the upstream has none.
   */
  async refreshListing(id: string, kind?: ListingKind, priority: UpstreamPriority = 'background'): Promise<boolean> {
    const tree = await this.areaTree();
    const stored = await this.deps.listings.findById(id);
    for (const k of kind ? [kind] : stored ? [stored.kind as ListingKind] : LISTING_KINDS) {
      const detail = (await this.deps.client.listingDetails(k, [id], priority)).get(id);
      if (!detail) continue;
      if (!stored) {
        const price = detail.pricing?.price;
        if (typeof price !== 'number') return false;
        const building = (await this.deps.client.buildingsOfListings(k, [id], priority)).get(id);
        const node = searchNodeOfDetail(id, k, price, detail, building?.area?.name ?? null);
        const record = mapSearchNode(node, k, { areas: tree, now: this.deps.clock() });
        if (!record) return false;
        await this.deps.listings.apply([record], this.derive, LISTING_CHANGE_RULES, this.now());
      }
      await this.hydrate(k, [id], priority);
      return true;
    }
    return false;
  }

  /**
   * Fetches one building by id or slug through a listing of it in the mirror (the site answers
   * buildings by listing id only) and stores it. Null when no listing of the mirror is in it, or the
   * upstream has none.
   */
  async refreshBuilding(idOrSlug: string, priority: UpstreamPriority = 'background'): Promise<Building | null> {
    const listing = await this.deps.listings.findInBuilding(idOrSlug);
    if (!listing) return null;
    const answer = (await this.deps.client.buildingsOfListings(listing.kind as ListingKind, [listing.id], priority)).get(listing.id);
    if (!answer) return null;
    const mapped = await this.hydrator.mapBuilding(answer, listing.id, await this.deps.buildings.find(String(answer.id)));
    await this.deps.buildings.put([mapped], this.now());
    return mapped.building;
  }
}
