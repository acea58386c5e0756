import type { Logger } from 'pino';
import { AreaTree, BOROUGH_IDS } from '../domain/area.js';
import type { Building } from '../domain/building.js';
import type { ListingKind, ListingRecord } from '../domain/listing.js';
import { recommendedScore } from '../domain/recommended-score.js';
import { transitScore, type Station } from '../domain/transit-score.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { BuildingsRepository } from '../store/buildings-repository.js';
import type { ApplyResult, ListingsRepository } from '../store/listings-repository.js';
import { AREAS_SCOPE, scopeKey, type ScopesRepository } from '../store/scopes-repository.js';
import { toUpstreamAreaId } from '../upstream/borough-ids.js';
import type { UpstreamClient } from '../upstream/client.js';
import { mapAreas, mapBuilding, mapListingNode, uniqueNodes } from '../upstream/mappers.js';

/** Page size of a crawl: the upstream's maximum. */
const CRAWL_PAGE_SIZE = 500;
/** A crawl that would take more than this share of a scope off the market is not trusted to sweep. */
const MAX_SWEEP_SHARE = 0.5;

export interface SyncerDeps {
  client: UpstreamClient;
  listings: ListingsRepository;
  areas: AreasRepository;
  buildings: BuildingsRepository;
  scopes: ScopesRepository;
  stations: readonly Station[];
  clock: () => Date;
  logger: Logger;
}

/** Every listing scope: both kinds in each of the five boroughs. */
export const LISTING_SCOPES: { kind: ListingKind; boroughId: number }[] = (['sale', 'rental'] as const).flatMap((kind) =>
  BOROUGH_IDS.map((boroughId) => ({ kind, boroughId })),
);

/**
 * Brings the mirror up to date from the upstream: the area list, whole scopes (kind x borough) and
 * single listings or buildings. A crawl is applied only when every page arrived, in one transaction;
 * a failure records the error on the scope and changes no stored listing.
 */
export class Syncer {
  private tree: AreaTree | null = null;

  constructor(private readonly deps: SyncerDeps) {}

  private now(): string {
    return this.deps.clock().toISOString();
  }

  /** The area tree from the store, fetched from upstream first if the store has none. */
  async areaTree(): Promise<AreaTree> {
    if (this.tree) return this.tree;
    const stored = await this.deps.areas.tree();
    if (stored.areas.length) return (this.tree = stored);
    return this.syncAreas();
  }

  async syncAreas(): Promise<AreaTree> {
    const at = this.now();
    try {
      const areas = mapAreas(await this.deps.client.areas());
      if (areas.length === 0) throw new Error('upstream returned no NYC areas');
      await this.deps.areas.replaceAll(areas);
      await this.deps.scopes.recordSuccess(AREAS_SCOPE, at, areas.length);
      this.tree = new AreaTree(areas);
      return this.tree;
    } catch (error) {
      await this.deps.scopes.recordFailure(AREAS_SCOPE, at, (error as Error).message);
      throw error;
    }
  }

  /** Derived values stored with a listing: transit score and recommended score. */
  private derive = (r: ListingRecord) => {
    const score = transitScore(r.geoPoint, this.deps.stations);
    return { transitScore: score, recommendedScore: recommendedScore({ transitScore: score, sqft: r.sqft, leadPhotoKey: r.leadPhotoKey, noFee: r.noFee }) };
  };

  /**
   * Crawls every page of one scope and applies it: upserts, price events, and (the crawl being
   * complete) takes listings it no longer contains off the market.
   * @throws UpstreamError (after recording it on the scope) when a page fails.
   */
  async syncScope(kind: ListingKind, boroughId: number): Promise<ApplyResult> {
    const scope = scopeKey(kind, boroughId);
    const started = this.now();
    await this.deps.scopes.recordAttempt(scope, started);
    try {
      const tree = await this.areaTree();
      const records = new Map<string, ListingRecord>();
      for (let page = 1; ; page++) {
        const result = await this.deps.client.search(kind, {
          filters: { areas: [toUpstreamAreaId(boroughId)] },
          page,
          perPage: CRAWL_PAGE_SIZE,
          sorting: { attribute: 'LISTED_AT', direction: 'ASCENDING' },
        });
        for (const node of uniqueNodes(result.edges)) {
          const record = mapListingNode(node, kind, { areas: tree, scopeBoroughId: boroughId, now: this.deps.clock() });
          if (record && record.boroughId === boroughId) records.set(record.id, record);
        }
        if (!result.pageInfo.hasNextPage || result.edges.length === 0) break;
      }
      const stored = await this.deps.scopes.get(scope);
      const storedCount = stored?.listing_count ?? 0;
      const trustSweep = storedCount === 0 || records.size >= storedCount * (1 - MAX_SWEEP_SHARE);
      if (!trustSweep) this.deps.logger.warn({ scope, seen: records.size, storedCount }, 'crawl much smaller than the stored scope: not sweeping');
      const at = this.now();
      const result = await this.deps.listings.apply([...records.values()], this.derive, at, trustSweep ? { sweep: { kind, boroughId } } : {});
      await this.deps.scopes.recordSuccess(scope, at, records.size);
      this.deps.logger.info({ scope, listings: records.size, ...result }, 'scope synced');
      return result;
    } catch (error) {
      await this.deps.scopes.recordFailure(scope, this.now(), (error as Error).message);
      this.deps.logger.warn({ scope, err: (error as Error).message }, 'scope sync failed');
      throw error;
    }
  }

  /** Areas, then every listing scope in turn. Returns the scopes that failed (empty when all succeeded). */
  async syncAll(): Promise<string[]> {
    const failed: string[] = [];
    try {
      await this.syncAreas();
    } catch {
      failed.push(AREAS_SCOPE);
      if (!(await this.deps.areas.tree()).areas.length) return failed;
    }
    for (const { kind, boroughId } of LISTING_SCOPES) {
      try {
        await this.syncScope(kind, boroughId);
      } catch {
        failed.push(scopeKey(kind, boroughId));
      }
    }
    return failed;
  }

  /**
   * Fetches one listing's detail from upstream (as a rental, else as a sale, or the given kind) and
   * stores it. Returns false when the upstream has no such listing.
   */
  async refreshListing(id: string, kind?: ListingKind): Promise<boolean> {
    const tree = await this.areaTree();
    for (const k of kind ? [kind] : (['rental', 'sale'] as const)) {
      const node = await this.deps.client.listing(k, id);
      if (!node) continue;
      const record = mapListingNode(node, k, { areas: tree, now: this.deps.clock() });
      if (!record) return false;
      if (!record.buildingId) {
        const building = await this.deps.client.buildingOfListing(k, id);
        if (building) record.buildingId = String(building.id);
      }
      await this.deps.listings.apply([record], this.derive, this.now(), { detail: true });
      return true;
    }
    return false;
  }

  /** Fetches one building by id or slug and stores it; returns it, or null when upstream has none. */
  async refreshBuilding(idOrSlug: string): Promise<Building | null> {
    const upstream = await this.deps.client.building(idOrSlug);
    if (!upstream) return null;
    const building = mapBuilding(upstream, await this.areaTree());
    await this.deps.buildings.put(building, this.now());
    return building;
  }
}
