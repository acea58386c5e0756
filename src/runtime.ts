import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { buildApp, createLogger } from './app.js';
import type { Billing } from './billing/billing.js';
import type { Config } from './config.js';
import type { Valuation } from './estimate/valuation.js';
import type { RefreshCoordinator } from './freshness/coordinator.js';
import type { MetricsServer } from './metrics/metrics-server.js';
import { Metrics } from './metrics/metrics.js';
import type { WebhookDispatcher } from './notify/webhook-dispatcher.js';
import type { ReadService } from './read/read-service.js';
import type { ChangesRepository } from './store/changes-repository.js';
import type { CityRecordsRepository } from './store/city-records-repository.js';
import type { Store } from './store/database.js';
import type { KeysRepository } from './store/keys-repository.js';
import type { ListingsRepository } from './store/listings-repository.js';
import type { ScopesRepository } from './store/scopes-repository.js';
import type { WebhooksRepository } from './store/webhooks-repository.js';
import type { FirstSync } from './sync/first-sync.js';
import type { HydrationJob } from './sync/hydration-job.js';
import type { OpenDataScheduler } from './sync/open-data-scheduler.js';
import type { OpenDataSyncer } from './sync/open-data-syncer.js';
import type { SyncScheduler } from './sync/scheduler.js';
import type { Syncer } from './sync/syncer.js';
import type { UpstreamClient } from './upstream/client.js';
import type { MarketClock } from './upstream/local/market-clock.js';
import type { LocalUpstream } from './upstream/local/server.js';
import type { LocalSoda } from './upstream/local-soda/server.js';
import type { LocalStripe } from './upstream/local-stripe/server.js';
import { startBackgroundPart, threadJobsHealth, threadUpstream } from './runtime/background-part.js';
import { type BackgroundThread, threadLock, threadRefreshes } from './runtime/background-thread.js';
import { startCoordination } from './runtime/coordination.js';
import { buildJobs } from './runtime/jobs.js';
import { startMetricsPart } from './runtime/metrics-part.js';
import { asApiOnly, type RuntimeOptions } from './runtime/options.js';
import { startReadSide } from './runtime/read-side.js';
import { openStorePart } from './runtime/store-part.js';
import { startSyncPart } from './runtime/sync-part.js';
import { startStripePart, startUpstreams } from './runtime/upstreams.js';

export type { RuntimeOptions } from './runtime/options.js';

/** Everything a running service holds; `close()` releases it all. */
export interface Runtime {
  config: Config;
  store: Store;
  upstream: LocalUpstream | null;
  /** The local SODA emulator (null with `OPEN_DATA_URL` set). */
  soda: LocalSoda | null;
  /** NYC Open Data's records in the mirror, and their sync and schedule. */
  cityRecords: CityRecordsRepository;
  openData: OpenDataSyncer;
  openDataScheduler: OpenDataScheduler;
  /** The local upstream's market clock (null with a real upstream or MARKET_CLOCK=off). */
  marketClock: MarketClock | null;
  client: UpstreamClient;
  syncer: Syncer;
  /** The first sync of an empty mirror, when run in the background (`initialSync: 'background'`); null otherwise. */
  firstSync: FirstSync | null;
  /** The background hydration of the backlog (resumed by itself after a failure). */
  hydration: HydrationJob;
  coordinator: RefreshCoordinator;
  scheduler: SyncScheduler;
  reads: ReadService;
  /** Stores each active listing's price position after each sync (`maxPricePosition` reads it). */
  valuation: Valuation;
  keys: KeysRepository;
  listings: ListingsRepository;
  scopes: ScopesRepository;
  changes: ChangesRepository;
  webhooks: WebhooksRepository;
  /** Delivers change events to webhook subscriptions (running unless `webhooks: false`). */
  dispatcher: WebhookDispatcher;
  redis: Redis | null;
  /** Plans sold through Stripe (null on an API-only instance without `STRIPE_SECRET_KEY`). */
  billing: Billing | null;
  /** The local Stripe emulator (null with `STRIPE_SECRET_KEY` set, or on an API-only instance). */
  stripe: LocalStripe | null;
  /** The Prometheus metrics, and the server that answers them on METRICS_PORT (null when unset). */
  metrics: Metrics;
  metricsServer: MetricsServer | null;
  /** The background thread that runs the syncs and jobs (`options.backgroundThread`); null when they run here. */
  background: BackgroundThread | null;
  app: FastifyInstance;
  logger: Logger;
  close: () => Promise<void>;
}

/**
 * Assembles the service from its configuration, part by part (src/runtime/): the store (running migrations), the
 * upstreams (a local emulator on loopback for each one whose URL is unset, Stripe's among them), what instances share
 * (Redis, the refreshes' coordinator), the syncs (the first one, when the store is empty), the read side, the
 * background jobs, the HTTP app and the metrics. Does not listen; `main.ts serve` does. `close()` stops the parts in
 * the reverse order. Scopes the first sync could not load are logged and left to later refreshes (requests then see
 * them as stale and trigger one).
 * @throws Error when the store cannot be opened or migrated, or an emulator cannot start (the parts started are stopped).
 */
export async function startRuntime(given: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  options = asApiOnly(given, options);
  const clock = options.clock ?? (() => new Date());
  const logger = options.logger ?? createLogger(given.logLevel);
  // The background thread's process metrics would count the process twice: the API thread's show it.
  const metrics = new Metrics({ defaultMetrics: !options.inBackgroundThread, thread: options.inBackgroundThread ? 'background' : 'main' });
  /** How each part started so far stops, in the order they started. */
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of [...stops].reverse()) await stop();
  };
  try {
    const background = await startBackgroundPart(given, options, logger);
    stops.push(background.stop);
    const { thread, options: role } = background;
    const tables = await openStorePart(background.config, logger, { autocheckpoint: !thread });
    stops.push(tables.stop);
    const upstreams = await startUpstreams(background.config, role, { clock, logger, metrics });
    stops.push(upstreams.close);
    const stripe = await startStripePart(background.config, role, { clock, logger });
    stops.push(stripe.stop);
    // The emulator's key, secret, address and prices stand for the unset Stripe settings.
    const config = stripe.config;
    const { redis, coordinator, stop: stopCoordination } = startCoordination(config, logger, thread ? threadLock(thread) : undefined);
    stops.push(stopCoordination);
    const sync = await startSyncPart(config, role, { tables, upstreams, coordinator, clock, logger, metrics });
    const refreshes = thread ? threadRefreshes(thread, tables.areas, sync.cityPolygons) : { ...sync, refresher: sync.syncer };
    const readSide = startReadSide(config, {
      ...{ tables, sync: refreshes, coordinator, redis, billingProvider: stripe.provider, clock, logger, metrics },
    });
    stops.push(readSide.stop);
    const jobs = buildJobs(config, role, {
      ...{ tables, sync, coordinator, estimator: readSide.reads.estimator, areaTree: () => readSide.reads.areaTree() },
      ...{ clock, logger, metrics },
    });
    const app = await buildApp({
      ...{ config, reads: readSide.reads, cityRecords: readSide.cityFacts, keys: tables.keys, quotas: readSide.quotas },
      ...{ keyResolver: readSide.keyResolver, billing: readSide.billing ?? undefined, limiters: readSide.limiters },
      ...{ scopes: tables.scopes, listings: tables.listings, changes: tables.changes, changeTail: jobs.changeTail },
      upstream: thread ? threadUpstream(thread) : upstreams.client,
      jobs: {
        ...(thread ? threadJobsHealth(thread, { syncer: sync.syncer, webhooks: tables.webhooks, clock }) : jobs.health),
        searchIndex: readSide.searchIndexState,
        estimates: () => readSide.reads.estimator.state(),
      },
      ...{ metrics, nextRefreshAt: jobs.nextRefreshAt, apiOnly: role.apiOnly, clock, logger },
    });
    stops.push(() => app.close());
    // The jobs stop before the app closes: the change stream's connections end with the change log's tail.
    stops.push(jobs.stop);
    await jobs.start();
    const metricsServer = await startMetricsPart(config, { metrics, tables, upstreams, jobs, readSide, thread, role, clock, logger });
    if (metricsServer) stops.push(metricsServer.close);
    let closing: Promise<void> | null = null;
    return {
      ...{ config, store: tables.store, upstream: upstreams.upstream, soda: upstreams.soda, cityRecords: tables.cityRecords },
      ...{ openData: sync.openData, openDataScheduler: jobs.openDataScheduler, marketClock: upstreams.marketClock },
      ...{ client: upstreams.client, syncer: sync.syncer, firstSync: jobs.firstSync, hydration: jobs.hydration, coordinator },
      ...{ scheduler: jobs.scheduler, reads: readSide.reads, valuation: jobs.valuation, keys: tables.keys },
      ...{ listings: tables.listings, scopes: tables.scopes, changes: tables.changes, webhooks: tables.webhooks },
      ...{ dispatcher: jobs.dispatcher, redis, billing: readSide.billing, stripe: stripe.emulator, metrics, metricsServer, app, logger },
      background: thread,
      // Idempotent: a second call waits for the first.
      close: () => (closing ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
