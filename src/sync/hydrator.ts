import type { RetryPolicy } from 'cockatiel';
import PQueue from 'p-queue';
import type { AreaTree } from '../domain/area.js';
import { BUILDING_AMENITIES, LISTING_DERIVED_BUILDING_FIELDS } from '../domain/building.js';
import { changedFields } from '../domain/change.js';
import type { HydratedFacts, ListingKind } from '../domain/listing.js';
import type { BuildingsRepository, StoredBuilding } from '../store/buildings-repository.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import { inSpan } from '../telemetry/spans.js';
import type { UpstreamPriority } from '../upstream/client.js';
import { UpstreamError } from '../upstream/errors.js';
import { mapBuildingDetail, mapDetail } from '../upstream/mappers.js';
import type { UpstreamBuildingDetail } from '../upstream/types.js';
import type { Building } from '../wire/building.js';
import { jobRetry } from './job-retry.js';
import type { ScopeCrawlerDeps } from './scope-crawler.js';
import type { Metrics } from '../metrics/metrics.js';

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

/** What hydration works with (as the syncer's dependencies name them), and the area tree (synced first when the store has none). */
export interface HydratorDeps extends Pick<ScopeCrawlerDeps, 'client' | 'clock' | 'logger' | 'jobRetry'> {
  listings: ListingsRepository;
  buildings: BuildingsRepository;
  /** Listings hydrated per detail request (aliased fields). */
  hydrationBatch: number;
  /** Failed detail requests after which a listing is parked. */
  hydrationMaxFailures: number;
  /** Detail batches in flight at once in a hydration run (the upstream client's concurrency; default 1). */
  hydrationLanes?: number;
  /** Where failed detail batches are counted. */
  metrics?: Metrics;
  areaTree: () => Promise<AreaTree>;
}

/**
 * Hydration: fetches the details of listings a crawl added or changed (and the buildings they are in) through the
 * site's detail queries, and stores them; counts failures against listings and parks those that keep failing.
 */
export class Hydrator {
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

  constructor(private readonly deps: HydratorDeps) {
    this.batchRetry = jobRetry(deps.jobRetry);
  }

  private now(): string {
    return this.deps.clock().toISOString();
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
  progress(): HydrationProgress {
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
  async mapBuilding(answer: UpstreamBuildingDetail, listingId: string, stored: StoredBuilding | undefined): Promise<MappedBuilding> {
    const listing = await this.deps.listings.findById(listingId);
    const amenities = listing ? await this.deps.listings.amenities(listingId) : [];
    const building = mapBuildingDetail(answer, {
      areas: await this.deps.areaTree(),
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
}
