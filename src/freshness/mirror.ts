import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { BOROUGH_IDS, type Area, type AreaTree } from '../domain/area.js';
import type { Building } from '../domain/building.js';
import { KNOWN_AMENITIES, type ListingDetail, type ListingKind, type ListingSummary } from '../domain/listing.js';
import { mortgageFactor } from '../domain/monthly-cost.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { BuildingsRepository } from '../store/buildings-repository.js';
import { rowToDetail, rowToSummary, type ListingRow } from '../store/listing-rows.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import { AREAS_SCOPE, scopeKey, type ScopesRepository } from '../store/scopes-repository.js';
import type { Database } from '../store/schema.js';
import { searchListings, type ListingSearch } from '../store/search-query.js';
import type { RefreshCoordinator } from './coordinator.js';
import { isFresh, type Freshness } from './policy.js';

/** What the mirror needs from the sync layer to refresh data (the Syncer provides it). */
export interface Refresher {
  syncScope(kind: ListingKind, boroughId: number): Promise<unknown>;
  syncAreas(): Promise<unknown>;
  refreshListing(id: string, kind?: ListingKind): Promise<boolean>;
  refreshBuilding(idOrSlug: string): Promise<Building | null>;
  areaTree(): Promise<AreaTree>;
}

export interface MirrorDeps {
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  listings: ListingsRepository;
  areas: AreasRepository;
  buildings: BuildingsRepository;
  scopes: ScopesRepository;
  refresher: Refresher;
  coordinator: RefreshCoordinator;
  config: Pick<Config, 'freshness' | 'mortgage'>;
  clock: () => Date;
}

/** A search answer: the page of summaries, the total, and freshness. */
export interface SearchAnswer {
  items: ListingSummary[];
  total: number;
  freshness: Freshness;
}

const NEVER = new Date(0);

/**
 * Reads of the mirror with the freshness rule applied (DESIGN.md "Freshness"): every answer says how
 * old its data is and whether it is `cached`, `stale` (this request started a refresh) or `refreshing`.
 * A single resource the store lacks is fetched from upstream synchronously; upstream errors then
 * propagate (UpstreamError). Stored data is always answered, whatever the upstream's state.
 */
export class Mirror {
  constructor(private readonly deps: MirrorDeps) {}

  private get now(): Date {
    return this.deps.clock();
  }

  /**
   * Judges stored data refreshed at `refreshedAt` under `key`, starting `refresh` in the background if
   * stale. Whether a refresh is running is asked (of every instance) only when the data is old.
   */
  private async freshness(key: string, refreshedAt: Date, threshold: number, refresh: () => Promise<unknown>): Promise<Freshness> {
    const base = { dataAge: refreshedAt.toISOString(), freshnessThreshold: threshold };
    if (isFresh(refreshedAt, threshold, this.now)) return { ...base, source: 'cached', refreshTriggered: false };
    if (await this.deps.coordinator.isRunningAnywhere(key)) return { ...base, source: 'refreshing', refreshTriggered: false };
    // Several requests may get here at once: the coordinator decides which one started the refresh.
    const outcome = this.deps.coordinator.trigger(key, refresh);
    return { ...base, source: outcome === 'joined' ? 'refreshing' : 'stale', refreshTriggered: outcome === 'started' };
  }

  /** Freshness of a resource fetched from upstream by this very request. */
  private fetchedNow(threshold: number): Freshness {
    return { dataAge: this.now.toISOString(), source: 'cached', freshnessThreshold: threshold, refreshTriggered: true };
  }

  async areaTree(): Promise<AreaTree> {
    return this.deps.refresher.areaTree();
  }

  /**
   * Searches listings of the boroughs `boroughIds` cover (all five when none). `dataAge` is the oldest
   * last successful sync among the covered scopes; stale scopes are refreshed in the background.
   */
  async search(search: ListingSearch, boroughIds: readonly number[]): Promise<SearchAnswer> {
    const covered = boroughIds.length ? boroughIds : BOROUGH_IDS;
    const threshold = this.deps.config.freshness.searchSeconds;
    const states = new Map((await this.deps.scopes.all()).map((s) => [s.scope, s]));
    const perScope = await Promise.all(covered.map((boroughId) => {
      const key = scopeKey(search.kind, boroughId);
      const at = states.get(key)?.last_success_at;
      return this.freshness(key, at ? new Date(at) : NEVER, threshold, () => this.deps.refresher.syncScope(search.kind, boroughId));
    }));
    const oldest = perScope.reduce((a, b) => (a.dataAge <= b.dataAge ? a : b));
    const source = perScope.some((f) => f.source === 'stale')
      ? 'stale'
      : perScope.some((f) => f.source === 'refreshing')
        ? 'refreshing'
        : 'cached';
    const { rows, total } = await searchListings(this.deps.db, search, {
      now: this.now,
      mortgageFactor: mortgageFactor(this.deps.config.mortgage),
      dialect: this.deps.dialect,
    });
    return {
      items: rows.map((r) => rowToSummary(r, this.now)),
      total,
      freshness: { dataAge: oldest.dataAge, source, freshnessThreshold: threshold, refreshTriggered: perScope.some((f) => f.refreshTriggered) },
    };
  }

  private async detail(row: ListingRow, freshness: Freshness): Promise<{ listing: ListingDetail; freshness: Freshness }> {
    const [amenities, history] = await Promise.all([this.deps.listings.amenities(row.id), this.deps.listings.priceHistory(row.id)]);
    return { listing: rowToDetail(row, amenities, KNOWN_AMENITIES, history, this.now), freshness };
  }

  private judgeListing(row: ListingRow): Promise<Freshness> {
    const threshold = this.deps.config.freshness.propertySeconds;
    const refreshedAt = [row.last_seen_at, row.detail_fetched_at].filter((v): v is string => !!v).sort().at(-1)!;
    return this.freshness(`listing:${row.id}`, new Date(refreshedAt), threshold, () =>
      this.deps.refresher.refreshListing(row.id, row.kind as ListingKind),
    );
  }

  /** One listing's detail by upstream id; fetched from upstream when not stored; null when upstream has none. */
  async listing(id: string): Promise<{ listing: ListingDetail; freshness: Freshness } | null> {
    const stored = await this.deps.listings.findById(id);
    if (stored) return this.detail(stored, await this.judgeListing(stored));
    if (!(await this.deps.refresher.refreshListing(id))) return null;
    const fetched = await this.deps.listings.findById(id);
    if (!fetched) return null;
    return this.detail(fetched, this.fetchedNow(this.deps.config.freshness.propertySeconds));
  }

  /**
   * One listing's detail by its path on the upstream site. `/rental/<id>` and `/sale/<id>` are fetched
   * from upstream when not stored; `/building/<slug>/<unit>` paths are answered from the mirror only.
   */
  async listingByUrlPath(path: string): Promise<{ listing: ListingDetail; freshness: Freshness } | null> {
    const stored = await this.deps.listings.findByUrlPath(path);
    if (stored) return this.detail(stored, await this.judgeListing(stored));
    const direct = /^\/(rental|sale)\/([A-Za-z0-9_-]+)$/.exec(path);
    if (!direct) return null;
    return this.listing(direct[2]);
  }

  /** One building by id or slug; fetched from upstream when not stored; null when upstream has none. */
  async building(idOrSlug: string): Promise<{ building: Building; freshness: Freshness } | null> {
    const threshold = this.deps.config.freshness.buildingSeconds;
    const stored = await this.deps.buildings.find(idOrSlug);
    if (stored) {
      const freshness = await this.freshness(`building:${stored.building.id}`, new Date(stored.fetchedAt), threshold, () =>
        this.deps.refresher.refreshBuilding(stored.building.id),
      );
      return { building: stored.building, freshness };
    }
    const fetched = await this.deps.refresher.refreshBuilding(idOrSlug);
    if (!fetched) return null;
    return { building: fetched, freshness: this.fetchedNow(threshold) };
  }

  /** Areas, optionally of one level and/or one borough, with the freshness of the area list. */
  async areas(filter: { level?: number; borough?: number }): Promise<{ areas: Area[]; freshness: Freshness }> {
    const state = await this.deps.scopes.get(AREAS_SCOPE);
    const at = state?.last_success_at ? new Date(state.last_success_at) : NEVER;
    const freshness = await this.freshness(AREAS_SCOPE, at, this.deps.config.freshness.areasSeconds, () => this.deps.refresher.syncAreas());
    return { areas: await this.deps.areas.list(filter), freshness };
  }
}
