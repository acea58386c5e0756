import { AreaTree, BOROUGH_IDS } from '../domain/area.js';
import { BUILDING_AMENITIES, LISTING_DERIVED_BUILDING_FIELDS } from '../domain/building.js';
import type { Building } from '../wire/building.js';
import { changedFields } from '../domain/change.js';
import { inSpan } from '../telemetry/spans.js';
import { LISTING_CHANGE_RULES } from './listing-changes.js';
import { ScopeCrawler, type ScopeCrawlerDeps } from './scope-crawler.js';
import { LISTING_KINDS, type HydratedFacts, type ListingKind, type ListingRecord } from '../domain/listing.js';
import { recommendedScore } from '../domain/recommended-score.js';
import { transitScore, type Station } from '../domain/transit-score.js';
import type { Districts } from '../domain/city-districts.js';
import type { GeoPoint } from '../wire/common.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { BuildingsRepository, StoredBuilding } from '../store/buildings-repository.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { ApplyResult } from '../store/listing-writes.js';
import type { ChangesRepository } from '../store/changes-repository.js';
import type { MarketRepository } from '../store/market-repository.js';
import { marketFiguresByRank } from '../domain/market.js';
import { AREAS_SCOPE, scopeFailing, scopeKey, type CrawlReport, type ScopesRepository } from '../store/scopes-repository.js';
import type { UpstreamPriority } from '../upstream/client.js';
import { mapAreas, mapBuildingDetail, mapDetail, mapSearchNode } from '../upstream/mappers.js';
import type { UpstreamBuildingDetail } from '../upstream/types.js';
import { UpstreamError } from '../upstream/errors.js';
import type { RetryPolicy } from 'cockatiel';
import { jobRetry } from './job-retry.js';
import type { Metrics } from '../metrics/metrics.js';
import PQueue from 'p-queue';
import { SingleFlight } from '../lib/single-flight.js';

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

/** An upstream failure that says nothing about the listings asked for: the whole run waits, none is counted. */
const stopsTheRun = (error: unknown) =>
  !(error instanceof UpstreamError) || error.failure === 'circuit-open' || error.failure === 'blocked' || error.failure === 'busy';

/** Hydration's state in this process, for /v1/health and the metrics. */
export interface HydrationProgress {
  /** Listings hydrated since the process started. */
  hydrated: number;
  /** Whether a hydration of the backlog runs now. */
  running: boolean;
  /** The last failed detail batch (after its retries) or given-up run: its cause and when (UTC). */
  lastError: string | null;
  lastErrorAt: string | null;
  /** Detail batches that failed after their retries since the process started. */
  failedBatches: number;
}

/** A building as the mirror stores it, with the fields that differ from the stored copy. */
interface MappedBuilding {
  building: Building;
  changed: string[];
}

/** Told how a sync goes: the step (`scopes`, `details`), how much of it is done, of how much. */
export type SyncProgress = (step: string, done: number, total: number) => void;

/** Every listing scope: both kinds in each of the five boroughs. */
export const LISTING_SCOPES: { kind: ListingKind; boroughId: number }[] = (['sale', 'rental'] as const).flatMap((kind) =>
  BOROUGH_IDS.map((boroughId) => ({ kind, boroughId })),
);

/**
 * Brings the mirror up to date from the upstream: the area list, whole scopes (kind x borough, split
 * into parts under the site's result cap), and the details of new or changed listings (hydration).
 * A crawl is applied only when every part arrived, in one transaction; a failure records the error on
 * the scope and changes no stored listing.
 */
export class Syncer {
  /** The area sync under way, if any: callers finding no areas stored share it. */
  private readonly areasSync = new SingleFlight<'areas', AreaTree>();
  private readonly reports = new Map<string, CrawlReport>();
  /** Listings hydrated by this process, and how many hydrations of the backlog are under way. */
  private hydratedCount = 0;
  private backlogRuns = 0;
  private failedBatches = 0;
  private lastHydrationError: { message: string; at: string } | null = null;
  private readonly batchRetry: RetryPolicy;
  /**
   * Hydration's writes, one at a time: lanes fetch in parallel, but two batches upserting the same buildings in
   * different orders deadlocked on PostgreSQL.
   */
  private readonly hydrationWrites = new PQueue({ concurrency: 1 });

  private readonly crawler: ScopeCrawler;

  constructor(private readonly deps: SyncerDeps) {
    this.crawler = new ScopeCrawler(deps);
    this.batchRetry = jobRetry(deps.jobRetry);
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

  /** Derived values stored with a listing: transit score, recommended score and the districts holding its position. */
  private derive = (r: ListingRecord) => {
    const score = transitScore(r.geoPoint, this.deps.stations);
    return {
      transitScore: score,
      recommendedScore: recommendedScore({ transitScore: score, sqft: r.sqft, leadPhotoKey: r.leadPhotoKey, noFee: r.noFee }),
      districts: this.deps.districtsAt(r.geoPoint),
    };
  };

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
    try {
      const tree = await this.areaTree();
      const { records, parts, splits, complete } = await inSpan('sync.crawl', { scope }, () => this.crawler.crawl(kind, boroughId, tree));
      const stored = await this.deps.scopes.get(scope);
      const storedCount = stored?.listing_count ?? 0;
      const trustSweep = complete && (storedCount === 0 || records.size >= storedCount * (1 - MAX_SWEEP_SHARE));
      if (!trustSweep)
        this.deps.logger.warn(
          { scope, seen: records.size, storedCount, complete },
          'crawl incomplete or much smaller than the stored scope: not sweeping',
        );
      const at = this.now();
      const result = await inSpan('sync.write', { scope, listings: records.size }, () =>
        this.deps.listings.apply(
          [...records.values()],
          this.derive,
          LISTING_CHANGE_RULES,
          at,
          trustSweep ? { sweep: { kind, boroughId } } : {},
        ),
      );
      await this.deps.scopes.recordSuccess(scope, at, records.size);
      this.reports.set(scope, { scope, parts, splits, complete, at });
      await this.deps.changes.prune(new Date(this.deps.clock().getTime() - this.deps.changesRetentionDays * 86_400_000).toISOString());
      this.deps.logger.info({ scope, listings: records.size, ...result }, 'scope synced');
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
      const message = (error as Error).message;
      const before = await this.deps.scopes.get(scope);
      await this.deps.scopes.recordFailure(scope, this.now(), message);
      // A failure is news when the scope was healthy or failed otherwise; a repeat is logged at debug.
      const repeat = before !== undefined && scopeFailing(before) && before.last_error === message;
      this.deps.logger[repeat ? 'debug' : 'warn']({ scope, err: message }, 'scope sync failed');
      throw error;
    }
  }

  /**
   * Records today's market figures (UTC day) of the borough and of the whole city for `kind`: each sync
   * replaces the day's row, so a day's history keeps the figures of its last sync.
   */
  private async recordMarket(kind: ListingKind, boroughId: number, tree: AreaTree, withCity = true): Promise<void> {
    const now = this.deps.clock();
    const [day, at] = [now.toISOString().slice(0, 10), now.toISOString()];
    const borough = await marketFiguresByRank(this.deps.market.ranked(kind, tree.withDescendants(boroughId), undefined), now);
    await this.deps.market.record(day, kind, boroughId, borough, at);
    if (!withCity) return;
    const city = await marketFiguresByRank(this.deps.market.ranked(kind, undefined, undefined), now);
    await this.deps.market.record(day, kind, 0, city, at);
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

  /**
   * Hydrates up to `budget` listings waiting for it (of one kind when given), oldest first, through
   * the detail queries, `hydrationBatch` listings a request; buildings not yet stored come with them.
   * A batch that fails is waited out and asked again ({@link jobRetry}); when it still fails, or the site
   * has no detail for a listing, the failure is counted against its listings (parked at
   * `hydrationMaxFailures`) and the run goes on with the rest. Returns how many were hydrated.
   * @throws UpstreamError when the upstream refuses every call (circuit open, bot block) after the waits,
   * or Error when the store fails: what was hydrated before stays.
   */
  async hydrateBacklog(
    budget: number,
    kind?: ListingKind,
    priority: UpstreamPriority = 'background',
    progress?: SyncProgress,
  ): Promise<number> {
    this.backlogRuns++;
    try {
      return await this.hydrateBacklogRun(budget, kind, priority, progress);
    } catch (error) {
      this.lastHydrationError = { message: (error as Error).message, at: this.now() };
      throw error;
    } finally {
      this.backlogRuns--;
    }
  }

  private async hydrateBacklogRun(
    budget: number,
    kind: ListingKind | undefined,
    priority: UpstreamPriority,
    progress: SyncProgress | undefined,
  ): Promise<number> {
    const { hydrationBatch: batch } = this.deps;
    const lanes = Math.max(1, this.deps.hydrationLanes ?? 1);
    const total = progress ? Math.min(budget, await this.backlog()) : 0;
    const inFlight = new Set<string>();
    let [taken, hydrated] = [0, 0];
    let stop: unknown = null;
    // Each lane takes the oldest listings no other lane holds, one kind a request, until the budget is spent
    // or nothing is left: a stalled request holds back its own lane only.
    const lane = async () => {
      while (taken < budget && stop === null) {
        progress?.('details', Math.min(taken, total), total);
        const waiting = (await this.deps.listings.backlog(batch * (lanes + 1), kind)).filter((b) => !inFlight.has(b.id));
        if (!waiting.length || stop !== null) return;
        const k = waiting[0].kind;
        const ids = waiting
          .filter((b) => b.kind === k)
          .slice(0, Math.min(batch, budget - taken))
          .map((b) => b.id);
        taken += ids.length;
        for (const id of ids) inFlight.add(id);
        try {
          // Awaited first: `hydrated += await ...` would read the sum before the wait and lose the other lanes' batches.
          const done = await this.hydrateCounted(k, ids, priority);
          hydrated += done;
        } catch (error) {
          stop ??= error;
        } finally {
          for (const id of ids) inFlight.delete(id);
        }
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    if (stop !== null) throw stop;
    progress?.('details', total, total);
    return hydrated;
  }

  /**
   * Hydrates one batch, waited out and asked again on a transient failure; a failure that persists, or a
   * listing the site has no detail for, is counted against its listings. Returns how many were hydrated.
   * @throws what {@link stopsTheRun}: the upstream refusing every call, or the store failing.
   */
  private async hydrateCounted(kind: ListingKind, ids: string[], priority: UpstreamPriority): Promise<number> {
    let missing: string[];
    try {
      missing = await this.batchRetry.execute(() => this.hydrate(kind, ids, priority));
    } catch (error) {
      if (stopsTheRun(error)) throw error;
      this.failedBatches++;
      this.deps.metrics?.hydrationFailures.inc();
      await this.countFailures(kind, ids, (error as Error).message);
      return 0;
    }
    // A listing the site has no detail for is gone or going: the next crawl settles it; counted meanwhile.
    if (missing.length) await this.countFailures(kind, missing, 'the upstream has no detail for this listing');
    return ids.length - missing.length;
  }

  /** Counts a failed detail request against `ids`, parks those at the limit, and says so. */
  private async countFailures(kind: ListingKind, ids: string[], error: string): Promise<void> {
    this.lastHydrationError = { message: error, at: this.now() };
    const parked = await this.deps.listings.recordDetailFailures(ids, error, this.deps.hydrationMaxFailures);
    const facts = { job: 'hydration', kind, listings: ids.length, parked: parked.length, err: error };
    if (parked.length)
      this.deps.logger.warn(
        { ...facts, parkedIds: parked.slice(0, 20) },
        'listing details failed repeatedly: parked, the rest of the backlog goes on',
      );
    else this.deps.logger.info(facts, 'a detail batch failed after its retries: counted, to be asked again');
  }

  /** How many active listings wait for hydration. */
  backlog(): Promise<number> {
    return this.deps.listings.backlogCount();
  }

  /** How many active listings are parked (their details failed `hydrationMaxFailures` times). */
  parked(): Promise<number> {
    return this.deps.listings.parkedCount();
  }

  /** Hydration's state in this process, for /v1/health and the metrics. */
  hydrationProgress(): HydrationProgress {
    return {
      hydrated: this.hydratedCount,
      running: this.backlogRuns > 0,
      lastError: this.lastHydrationError?.message ?? null,
      lastErrorAt: this.lastHydrationError?.at ?? null,
      failedBatches: this.failedBatches,
    };
  }

  /**
   * Fetches the details of these listings (one aliased request), and the buildings among them not yet
   * stored (one more), and stores both. A listing the site no longer has is left for the next crawl.
   * Returns the ids the site had no detail for.
   */
  hydrate(kind: ListingKind, ids: string[], priority: UpstreamPriority = 'background'): Promise<string[]> {
    return inSpan('sync.hydrate', { kind, listings: ids.length, priority }, () => this.hydrateTraced(kind, ids, priority));
  }

  private async hydrateTraced(kind: ListingKind, ids: string[], priority: UpstreamPriority): Promise<string[]> {
    const details = await this.deps.client.listingDetails(kind, ids, priority);
    const byBuilding = new Map<string, string>();
    for (const [id, detail] of details) {
      const buildingId = detail?.buildingId;
      if (buildingId !== null && buildingId !== undefined && !byBuilding.has(String(buildingId))) byBuilding.set(String(buildingId), id);
    }
    const buildings = new Map<string, Building>();
    const missing: [string, string][] = [];
    for (const [buildingId, listingId] of byBuilding) {
      const stored = await this.deps.buildings.find(buildingId);
      if (stored) buildings.set(buildingId, stored.building);
      else missing.push([buildingId, listingId]);
    }
    if (missing.length) {
      const answers = await this.deps.client.buildingsOfListings(
        kind,
        missing.map(([, listingId]) => listingId),
        priority,
      );
      const fetched: MappedBuilding[] = [];
      for (const [buildingId, listingId] of missing) {
        const answer = answers.get(listingId);
        if (!answer) continue;
        // Not stored (that is why it was fetched): nothing to compare with.
        const mapped = await this.mapBuilding(answer, listingId, undefined);
        fetched.push(mapped);
        buildings.set(buildingId, mapped.building);
      }
      // One transaction for the batch's buildings: a commit each cost more than the writes themselves.
      await this.hydrationWrites.add(() => this.deps.buildings.put(fetched, this.now()));
    }
    const items: { id: string; facts: HydratedFacts }[] = [];
    for (const [id, detail] of details) {
      if (!detail) continue;
      const building = detail.buildingId === null || detail.buildingId === undefined ? undefined : buildings.get(String(detail.buildingId));
      items.push({ id, facts: mapDetail(detail, building) });
    }
    await this.hydrationWrites.add(() => this.deps.listings.applyDetails(items, this.now()));
    this.hydratedCount += items.length;
    return [...details].filter(([, detail]) => !detail).map(([id]) => id);
  }

  /**
   * Maps a building answer; the slug, position and amenities come from the listing that led to it.
   * `changed` names the fields that differ from `stored` (empty when none is stored).
   */
  private async mapBuilding(
    answer: UpstreamBuildingDetail,
    listingId: string,
    stored: StoredBuilding | undefined,
  ): Promise<MappedBuilding> {
    const listing = await this.deps.listings.findById(listingId);
    const amenities = listing ? await this.deps.listings.amenities(listingId) : [];
    const building = mapBuildingDetail(answer, {
      areas: await this.areaTree(),
      boroughId: listing?.borough_id ?? null,
      slug: listing?.building_slug ?? null,
      geoCenter:
        listing && listing.latitude !== null && listing.longitude !== null
          ? { latitude: listing.latitude, longitude: listing.longitude }
          : null,
      amenities: {
        list: amenities.filter((a) => BUILDING_AMENITIES.includes(a)),
        doormanTypes: amenities.includes('DOORMAN') ? ['DOORMAN'] : [],
        parkingTypes: [],
        storageTypes: [],
      },
    });
    return { building, changed: changedFields(stored?.building, building, LISTING_DERIVED_BUILDING_FIELDS) };
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
        const areaName = building?.area?.name ?? null;
        const node = {
          id,
          price,
          status: detail.status,
          areaName,
          bedroomCount: detail.propertyDetails?.bedroomCount,
          fullBathroomCount: detail.propertyDetails?.fullBathroomCount,
          halfBathroomCount: detail.propertyDetails?.halfBathroomCount,
          livingAreaSize: detail.propertyDetails?.livingAreaSize,
          street: detail.propertyDetails?.address?.street,
          unit: detail.propertyDetails?.address?.unit,
          urlPath: `/${k}/${id}`,
          noFee: detail.pricing?.noFee,
        };
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
    const mapped = await this.mapBuilding(answer, listing.id, await this.deps.buildings.find(String(answer.id)));
    await this.deps.buildings.put([mapped], this.now());
    return mapped.building;
  }
}
