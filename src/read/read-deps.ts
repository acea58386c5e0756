import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { AreaTree } from '../domain/area.js';
import type { ListingKind } from '../domain/listing.js';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import type { Freshness } from '../freshness/policy.js';
import type { ScopeFreshness } from '../freshness/scopes.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { BuildingsRepository } from '../store/buildings-repository.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { MarketRepository } from '../store/market-repository.js';
import type { Database } from '../store/schema.js';
import type { ScopesRepository } from '../store/scopes-repository.js';
import type { Building } from '../wire/building.js';
import type { GeoPoint } from '../wire/common.js';
import type { ListingSummary } from '../wire/listing.js';

/** What the mirror needs from the sync layer to refresh data (the Syncer provides it). */
export interface Refresher {
  syncScope(kind: ListingKind, boroughId: number): Promise<unknown>;
  /**
   * The area tree as stored (kept in memory, read again after an area sync here and at least every
   * READ_CACHE_SECONDS), synced from upstream first when none is stored.
   */
  areaTree(): Promise<AreaTree>;
  /** Syncs the area list and returns the tree it made. */
  syncAreas(): Promise<AreaTree>;
  /** `interactive`: a caller waits for the answer (served before background work). */
  refreshListing(id: string, kind?: ListingKind, priority?: 'interactive' | 'background'): Promise<boolean>;
  refreshBuilding(idOrSlug: string, priority?: 'interactive' | 'background'): Promise<Building | null>;
  /** Hydrates these listings through the detail queries. */
  hydrate(kind: ListingKind, ids: string[], priority?: 'interactive' | 'background'): Promise<unknown>;
  /** False while the upstream refuses calls (circuit breaker open): no refresh is started then. */
  canRefresh(): boolean;
}

/** What the read service reads and refreshes through. */
export interface MirrorDeps {
  /** What searches read through (`Store.readDb`: a connection that never waits behind a write). */
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  listings: ListingsRepository;
  areas: AreasRepository;
  buildings: BuildingsRepository;
  scopes: ScopesRepository;
  market: MarketRepository;
  refresher: Refresher;
  coordinator: RefreshCoordinator;
  /** Judges data synced by scope: listing scopes and the area list. */
  scopeFreshness: ScopeFreshness;
  config: Pick<
    Config,
    'freshness' | 'mortgage' | 'hydration' | 'readCacheSeconds' | 'searchIndex' | 'requestDeadlineSeconds' | 'estimateRefreshSeconds'
  >;
  clock: () => Date;
  /** Logs background work that gave up (a search index build that failed). */
  warn?: (message: string, error: unknown) => void;
  /** Logs what made searches wait (a slow delta of the search index). */
  info?: (message: string, fields: Record<string, unknown>) => void;
  /** Whether a point lies on the city's land (the police precincts' polygons hold it); every point when not given. */
  onLand?: (point: GeoPoint) => boolean;
}

/** A search answer: the page of summaries, the total, freshness, and the cursor of the next page (null at the end or for DISTANCE). */
export interface SearchAnswer {
  items: ListingSummary[];
  total: number;
  freshness: Freshness;
  nextCursor: string | null;
}
