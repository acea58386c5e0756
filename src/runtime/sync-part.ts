import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import type { Metrics } from '../metrics/metrics.js';
import { CityPolygons } from '../reference/city-polygons.js';
import { loadStations } from '../reference/subway-stations.js';
import { OPEN_DATA_KEY } from '../store/scopes-repository.js';
import { DEFAULT_JOB_RETRY } from '../sync/job-retry.js';
import { OpenDataSyncer } from '../sync/open-data-syncer.js';
import { Syncer } from '../sync/syncer.js';
import type { GeoPoint } from '../wire/common.js';
import type { RuntimeOptions } from './options.js';
import type { StorePart } from './store-part.js';
import type { Upstreams } from './upstreams.js';

/** The two syncs that keep the mirror (the listings site's and NYC Open Data's), and the city's polygons they place rows in. */
export interface SyncPart {
  syncer: Syncer;
  openData: OpenDataSyncer;
  /** The city's district polygons, read on first use (the files take a moment). */
  cityPolygons: () => CityPolygons;
  /** Whether the mirror held no listing at start, and a first sync was asked for. */
  firstSyncNeeded: boolean;
}

/**
 * Builds the syncs; when the mirror holds no listing, runs the first sync of every scope before returning (unless
 * `options.initialSync` is false or `background`), and starts NYC Open Data's first sync in the background when no
 * recorded sale is stored. Scopes the first sync could not load are logged and left to later refreshes.
 */
export async function startSyncPart(
  config: Config,
  options: RuntimeOptions,
  deps: { tables: StorePart; upstreams: Upstreams; coordinator: RefreshCoordinator; clock: () => Date; logger: Logger; metrics: Metrics },
): Promise<SyncPart> {
  const { tables, upstreams, clock, logger, metrics } = deps;
  let polygons: CityPolygons | null = null;
  const cityPolygons = () => (polygons ??= new CityPolygons(config.sharedDataDir));
  // Listings and recorded sales are given their districts when written.
  const districtsAt = (point: GeoPoint | null) => cityPolygons().districtsAt(point);
  const { listings, areas, buildings, scopes, market, changes, cityRecords } = tables;
  const syncer = new Syncer({
    ...{ client: upstreams.client, listings, areas, buildings, scopes, market, changes },
    changesRetentionDays: config.changesRetentionDays,
    stations: loadStations(),
    ...{ districtsAt, clock, logger, metrics },
    resultCap: config.upstreamResultCap,
    hydrationBatch: config.hydration.batch,
    hydrationBudget: config.hydration.budget,
    hydrationMaxFailures: config.hydration.maxFailures,
    hydrationLanes: config.upstreamConcurrency,
    jobRetry: { ...DEFAULT_JOB_RETRY, attempts: config.jobRetryAttempts },
  });
  const openData = new OpenDataSyncer({
    ...{ client: upstreams.sodaClient, records: cityRecords, scopes, areas, buildings, districtsAt, clock, logger, metrics },
    pageSize: config.openData.pageSize,
  });
  const firstSyncNeeded = (options.initialSync ?? true) !== false && (await listings.count()) === 0;
  if (firstSyncNeeded && options.initialSync !== 'background') {
    const started = Date.now();
    // Searches answer once the crawl is in; listing details are hydrated in the background after it.
    const failed = await syncer.syncAll({ hydrate: false });
    const [rentals, sales, hydrationBacklog] = [await listings.count('rental'), await listings.count('sale'), await syncer.backlog()];
    logger.info({ ms: Date.now() - started, failed, rentals, sales, hydrationBacklog }, 'initial sync done');
  }
  if ((options.initialOpenDataSync ?? options.initialSync ?? true) && (await cityRecords.count('recorded_sales')) === 0) {
    deps.coordinator.trigger(OPEN_DATA_KEY, async () => {
      const started = Date.now();
      const failed = await openData.syncAll();
      const [recordedSales, taxLots] = [await cityRecords.count('recorded_sales'), await cityRecords.count('tax_lots')];
      logger.info({ ms: Date.now() - started, failed, recordedSales, taxLots }, 'first open data sync done');
    });
  }
  return { syncer, openData, cityPolygons, firstSyncNeeded };
}
