import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { KeyChanges } from '../access/key-changes.js';
import { KeyResolver } from '../access/key-resolver.js';
import { PlanLimiters } from '../access/plan-limiters.js';
import { QuotaMeter } from '../access/quota-meter.js';
import { Billing } from '../billing/billing.js';
import type { SubscriptionProvider } from '../billing/provider.js';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import { ScopeFreshness } from '../freshness/scopes.js';
import type { Metrics } from '../metrics/metrics.js';
import { CityRecords, type CityRecordsDeps } from '../read/city-records.js';
import type { Refresher } from '../read/read-deps.js';
import { ReadService } from '../read/read-service.js';
import { NO_SEARCH_INDEX, type SearchIndexState } from '../search/search-index.js';
import type { StorePart } from './store-part.js';
import type { SyncPart } from './sync-part.js';

/** What the read side refreshes through: the listings' refreshes, NYC Open Data's sync, and the city's polygons. */
export type Refreshes = Pick<SyncPart, 'cityPolygons'> & { refresher: Refresher; openData: CityRecordsDeps['openData'] };

/** What answers requests: the reads of the mirror, the city's records, the keys, their limits and quotas, and billing. */
export interface ReadSide {
  reads: ReadService;
  cityFacts: CityRecords;
  scopeFreshness: ScopeFreshness;
  keyResolver: KeyResolver;
  limiters: PlanLimiters;
  quotas: QuotaMeter;
  /** The search index's state, as /v1/health shows it and the metrics read it. */
  searchIndexState: () => SearchIndexState;
  /** Plans sold through Stripe (null without a provider). */
  billing: Billing | null;
  /** Writes the quotas counted and stops listening for key changes. */
  stop: () => Promise<void>;
}

/**
 * Builds the read side over the store. With Redis, a key's plan or status changed on one instance is seen at
 * once on every other (a key change clears every instance's key cache).
 */
export function startReadSide(
  config: Config,
  deps: {
    tables: StorePart;
    /** What refreshes the mirror (the syncs of this thread, or the background thread's) and places rows in the city. */
    sync: Refreshes;
    coordinator: RefreshCoordinator;
    redis: Redis | null;
    billingProvider: SubscriptionProvider | null;
    clock: () => Date;
    logger: Logger;
    metrics: Metrics;
  },
): ReadSide {
  const { tables, sync, coordinator, redis, clock, logger, metrics } = deps;
  const { listings, areas, buildings, scopes, market, keys } = tables;
  const warn = (message: string, error: unknown) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, message);
  const info = (message: string, fields: Record<string, unknown>) => logger.info(fields, message);
  const scopeFreshness = new ScopeFreshness({ scopes, coordinator, readCacheSeconds: config.readCacheSeconds, clock });
  const reads = new ReadService({
    db: tables.store.readDb,
    dialect: tables.store.dialect,
    ...{ listings, areas, buildings, scopes, market, refresher: sync.refresher, coordinator, scopeFreshness, config, clock, warn, info },
    onLand: (point) => sync.cityPolygons().policePrecinctAt(point) !== null,
  });
  const cityFacts = new CityRecords({
    records: tables.cityRecords,
    scopeFreshness,
    openData: sync.openData,
    polygons: sync.cityPolygons,
    freshnessSeconds: config.openData.freshnessSeconds,
  });
  const keyResolver = new KeyResolver(keys, config.keyCacheSeconds);
  const keyChanges = redis ? new KeyChanges(redis, config.redisKeyPrefix, logger) : null;
  if (keyChanges) {
    keys.onChange(() => keyChanges.publish());
    keyChanges.listen(() => keyResolver.clear());
  }
  const quotas = new QuotaMeter(tables.quotas, config.quotaFlushSeconds, logger);
  const billing = deps.billingProvider
    ? new Billing({ provider: deps.billingProvider, repository: tables.billing, keys, config, clock, logger, metrics })
    : null;
  return {
    ...{ reads, cityFacts, scopeFreshness, keyResolver, quotas, billing },
    searchIndexState: () => reads.searcher.index?.state() ?? NO_SEARCH_INDEX,
    limiters: new PlanLimiters(config, redis, config.redisKeyPrefix),
    stop: async () => {
      await quotas.close();
      keyChanges?.close();
    },
  };
}
