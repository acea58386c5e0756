import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { buildApp, createLogger } from './app.js';
import type { Config } from './config.js';
import type { SiteData } from './upstream/local/site-data.js';
import { loadStations } from './reference/subway-stations.js';
import { RefreshCoordinator } from './freshness/coordinator.js';
import { ScopeFreshness } from './freshness/scopes.js';
import { ReadService } from './read/read-service.js';
import { RedisRefreshLock } from './freshness/refresh-lock.js';
import { KeyResolver } from './access/key-resolver.js';
import { PlanLimiters } from './access/plan-limiters.js';
import { QuotaMeter } from './access/quota-meter.js';
import { AreasRepository } from './store/areas-repository.js';
import { BuildingsRepository } from './store/buildings-repository.js';
import { openStore, type Store } from './store/database.js';
import { KeysRepository } from './store/keys-repository.js';
import { ListingsRepository } from './store/listings-repository.js';
import { ChangesRepository } from './store/changes-repository.js';
import { ChangeTail } from './notify/change-tail.js';
import { WebhookDispatcher } from './notify/webhook-dispatcher.js';
import { WebhooksRepository } from './store/webhooks-repository.js';
import { MarketRepository } from './store/market-repository.js';
import { QuotaRepository } from './store/quota-repository.js';
import { OPEN_DATA_KEY, OPEN_DATA_SCOPES, ScopesRepository } from './store/scopes-repository.js';
import { SyncScheduler } from './sync/scheduler.js';
import { HydrationJob } from './sync/hydration-job.js';
import { FirstSync } from './sync/first-sync.js';
import { DEFAULT_JOB_RETRY } from './sync/job-retry.js';
import { Syncer } from './sync/syncer.js';
import { GraphqlUpstreamClient, type UpstreamClient } from './upstream/client.js';
import type { MarketClock } from './upstream/local/market-clock.js';
import type { LocalUpstream } from './upstream/local/server.js';
import { startLocalSite } from './local-site.js';
import { CityRecordsRepository } from './store/city-records-repository.js';
import { OpenDataSyncer } from './sync/open-data-syncer.js';
import { OpenDataScheduler } from './sync/open-data-scheduler.js';
import { Valuation } from './estimate/valuation.js';
import { SodaClient } from './upstream/soda-client.js';
import { startLocalSoda, type LocalSoda } from './upstream/local-soda/server.js';
import { parseFaults } from './upstream/faults.js';
import { Metrics } from './metrics/metrics.js';
import { startMetricsServer, type MetricsServer } from './metrics/metrics-server.js';
import { cityDatasets } from './dataset/city-datasets.js';
import { CityPolygons } from './reference/city-polygons.js';
import type { GeoPoint } from './wire/common.js';
import { CityRecords } from './read/city-records.js';
import { NO_SEARCH_INDEX } from './search/search-index.js';
import { KeyChanges } from './access/key-changes.js';
import { Billing } from './billing/billing.js';
import { BillingRepository } from './store/billing-repository.js';
import { startStripe } from './local-stripe.js';
import type { LocalStripe, LocalStripeOptions } from './upstream/local-stripe/server.js';

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
  app: FastifyInstance;
  logger: Logger;
  close: () => Promise<void>;
}

export interface RuntimeOptions {
  /** The service's clock (UTC); tests move it. */
  clock?: () => Date;
  logger?: Logger;
  /** The site data the local upstream serves (built from ../shared/data when not given). */
  siteData?: SiteData;
  /** A manual market clock (tests): starts at the service clock's time and moves only when advanced. */
  manualMarketClock?: boolean;
  /**
   * Run the first full sync when the store has no listings (default true): before returning, or with `background` after
   * it (`Runtime.firstSync`), each scope answering `refreshing` until its turn (sync/first-sync.ts).
   */
  initialSync?: boolean | 'background';
  /** Sync NYC Open Data in the background when the store holds no recorded sales (default: as `initialSync`). */
  initialOpenDataSync?: boolean;
  /** Start the periodic scheduler (default: when `config.syncIntervalSeconds > 0`). */
  scheduler?: boolean;
  /** Deliver webhooks from this process (default true; one-shot commands turn it off). */
  webhooks?: boolean;
  /** Sell plans through Stripe (default true; the one-shot commands and the worker, which serve no pages, turn it off). */
  billing?: boolean;
  /** The local Stripe emulator's options (tests: quick retries of its event deliveries, the portal's cancellation). */
  localStripe?: Partial<LocalStripeOptions>;
  /** Keep the text of every query the local upstream answers in `upstream.queries` (tests; default off). */
  recordUpstreamQueries?: boolean;
  /**
   * An API-only instance (`serve --api-only`): it serves the mirror a worker (`sync --watch`) keeps. No first
   * sync, no hydration, no schedules, no webhook deliveries; refreshes a request starts go to `UPSTREAM_URL`
   * and `OPEN_DATA_URL`, which must be set (no local emulator is started), under the shared Redis lock; every
   * non-public route answers 503 UNAVAILABLE until the mirror holds a listing.
   * @throws Error when `UPSTREAM_URL` or `OPEN_DATA_URL` is unset.
   */
  apiOnly?: boolean;
}

/**
 * Assembles the service from its configuration: opens the store (running migrations), starts the local
 * upstream on loopback when no `UPSTREAM_URL` is set, syncs everything once when the store is empty,
 * and builds the HTTP app. Does not listen; `main.ts serve` does. Scopes the first sync could not load
 * are logged and left to later refreshes (requests then see them as stale and trigger one).
 * @throws Error when the store cannot be opened or migrated, or the local upstream cannot start.
 */
export async function startRuntime(given: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  let config = given;
  if (options.apiOnly) {
    if (!config.upstreamUrl || !config.openData.url) {
      throw new Error(
        'an API-only instance starts no local emulator: set UPSTREAM_URL and OPEN_DATA_URL to the sources the worker syncs from (docs/operations.md)',
      );
    }
    options = { ...options, initialSync: false, initialOpenDataSync: false, scheduler: false, webhooks: false };
  }
  const clock = options.clock ?? (() => new Date());
  const logger = options.logger ?? createLogger(config.logLevel);
  const store = await openStore(config.databaseUrl, {
    readThread: config.sqliteReadThread,
    rowBuilders: config.rowBuilders,
    namedStatements: config.namedStatements,
    onConnectionError: (error) => logger.warn({ err: error.message }, 'database connection dropped: a new one is opened when needed'),
  });
  let upstreams: Upstreams | null = null;
  let redis: Redis | null = null;
  let stripe: LocalStripe | null = null;
  let keyChanges: KeyChanges | null = null;
  let metricsServer: MetricsServer | null = null;
  const metrics = new Metrics();
  try {
    upstreams = await startUpstreams(config, options, { clock, logger, metrics });
    const stripeSetup =
      (options.billing ?? true)
        ? await startStripe(config, { apiOnly: options.apiOnly, clock, logger, emulator: options.localStripe })
        : { config, provider: null, emulator: null };
    stripe = stripeSetup.emulator;
    // The emulator's key, secret, address and prices stand for the unset Stripe settings.
    config = stripeSetup.config;
    const { upstream, marketClock, client, soda, sodaClient } = upstreams;
    // The city's polygons, read on first use (the files take a moment): listings and recorded sales are given their
    // districts when written, and a building's facts are looked up in them.
    let polygons: CityPolygons | null = null;
    const cityPolygons = () => (polygons ??= new CityPolygons(config.sharedDataDir));
    const districtsAt = (point: GeoPoint | null) => cityPolygons().districtsAt(point);
    // Reads go through the read connection: none waits behind a crawl's write transaction on the writer's.
    const listings = new ListingsRepository(store.db, store.readDb);
    const areas = new AreasRepository(store.db, config.readCacheSeconds, store.readDb);
    const buildings = new BuildingsRepository(store.db);
    const scopes = new ScopesRepository(store.db, store.readDb);
    const market = new MarketRepository(store.db, store.readDb);
    const changes = new ChangesRepository(store.db);
    const keys = new KeysRepository(store.db);
    const syncer = new Syncer({
      client,
      listings,
      areas,
      buildings,
      scopes,
      market,
      changes,
      changesRetentionDays: config.changesRetentionDays,
      stations: loadStations(),
      districtsAt,
      clock,
      logger,
      resultCap: config.upstreamResultCap,
      hydrationBatch: config.hydration.batch,
      hydrationBudget: config.hydration.budget,
      hydrationMaxFailures: config.hydration.maxFailures,
      hydrationLanes: config.upstreamConcurrency,
      jobRetry: { ...DEFAULT_JOB_RETRY, attempts: config.jobRetryAttempts },
      metrics,
    });
    const firstSyncNeeded = (options.initialSync ?? true) !== false && (await listings.count()) === 0;
    if (firstSyncNeeded && options.initialSync !== 'background') {
      const started = Date.now();
      // Searches answer once the crawl is in; listing details are hydrated in the background after it.
      const failed = await syncer.syncAll({ hydrate: false });
      logger.info(
        {
          ms: Date.now() - started,
          failed,
          rentals: await listings.count('rental'),
          sales: await listings.count('sale'),
          hydrationBacklog: await syncer.backlog(),
        },
        'initial sync done',
      );
    }
    redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : null;
    const lock = redis ? new RedisRefreshLock(redis, config.redisKeyPrefix, logger) : null;
    const coordinator = new RefreshCoordinator(logger, 2, 100, lock);
    const cityRecords = new CityRecordsRepository(store.db);
    const openData = new OpenDataSyncer({
      client: sodaClient,
      records: cityRecords,
      scopes,
      areas,
      buildings,
      districtsAt,
      clock,
      logger,
      pageSize: config.openData.pageSize,
      metrics,
    });
    const openDataScheduler = new OpenDataScheduler(
      { syncer: openData, scopes, coordinator, clock, logger },
      config.openData.syncIntervalSeconds,
    );
    if ((options.initialOpenDataSync ?? options.initialSync ?? true) && (await cityRecords.count('recorded_sales')) === 0) {
      coordinator.trigger(OPEN_DATA_KEY, async () => {
        const started = Date.now();
        const failed = await openData.syncAll();
        logger.info(
          {
            ms: Date.now() - started,
            failed,
            recordedSales: await cityRecords.count('recorded_sales'),
            taxLots: await cityRecords.count('tax_lots'),
          },
          'first open data sync done',
        );
      });
    }
    const hydration = new HydrationJob({
      syncer,
      coordinator,
      clock,
      logger,
      afterRun: async () => {
        await syncer.recordMarkets();
        // Recorded sales are matched to buildings by address: the first hydration brings the buildings.
        if ((await cityRecords.count('recorded_sales')) > 0) await openData.positionSales();
        // The listings as the sync left them, with their details.
        await valuation.run();
      },
    });
    const scheduler = new SyncScheduler({ syncer, hydration, scopes, coordinator, clock, logger }, config.syncIntervalSeconds);
    const quotas = new QuotaMeter(new QuotaRepository(store.db), config.quotaFlushSeconds, logger);
    const changeTail = new ChangeTail(changes, config.changesStream.pollSeconds);
    const scopeFreshness = new ScopeFreshness({ scopes, coordinator, readCacheSeconds: config.readCacheSeconds, clock });
    const reads = new ReadService({
      db: store.readDb,
      dialect: store.dialect,
      ...{ listings, areas, buildings, scopes, market, refresher: syncer, coordinator, scopeFreshness, config, clock },
      warn: (message, error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, message),
      onLand: (point) => cityPolygons().policePrecinctAt(point) !== null,
    });
    const valuation = new Valuation({
      db: store.readDb,
      listings,
      estimator: reads.estimator,
      // An API-only instance syncs nothing: its worker values.
      enabled: config.pricePositions && !options.apiOnly,
      warn: (message, error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, message),
      clock,
    });
    // Its runs end with a valuation: started once the valuation is there.
    // A first sync in the background resumes hydration itself once every scope is in.
    const firstSync =
      firstSyncNeeded && options.initialSync === 'background' ? new FirstSync({ syncer, coordinator, hydration, logger }) : null;
    if ((options.initialSync ?? true) !== false && !firstSync && (await syncer.backlog()) > 0) hydration.resume();
    const cityFacts = new CityRecords({
      records: cityRecords,
      scopeFreshness,
      openData,
      polygons: cityPolygons,
      freshnessSeconds: config.openData.freshnessSeconds,
    });
    /** The search index's state, as /v1/health shows it and the metrics read it. */
    const searchIndexState = () => reads.searcher.index?.state() ?? NO_SEARCH_INDEX;
    /** Hydration's state, as /v1/health shows it and the metrics read it. */
    const hydrationHealth = async () => {
      const [backlog, parked] = await Promise.all([syncer.backlog(), syncer.parked()]);
      return { backlog, parked, ...syncer.hydrationProgress(), ...hydration.state() };
    };
    const keyResolver = new KeyResolver(keys, config.keyCacheSeconds);
    if (redis) {
      // A plan or status changed on one instance is seen at once on every other.
      keyChanges = new KeyChanges(redis, config.redisKeyPrefix, logger);
      const changes = keyChanges;
      keys.onChange(() => changes.publish());
      changes.listen(() => keyResolver.clear());
    }
    const billing = stripeSetup.provider
      ? new Billing({ provider: stripeSetup.provider, repository: new BillingRepository(store.db), keys, config, clock, logger, metrics })
      : null;
    const webhooks = new WebhooksRepository(store.db);
    const dispatcher = new WebhookDispatcher({
      webhooks,
      changes,
      tail: changeTail,
      areaTree: () => reads.areaTree(),
      config,
      clock,
      logger,
      metrics,
    });
    const app = await buildApp({
      config,
      reads,
      cityRecords: cityFacts,
      keys,
      quotas,
      keyResolver,
      billing: billing ?? undefined,
      limiters: new PlanLimiters(config, redis, config.redisKeyPrefix),
      scopes,
      listings,
      changes,
      changeTail,
      upstream: client,
      jobs: {
        crawlReports: () => syncer.crawlReports(),
        running: (scope) => coordinator.isRunning(OPEN_DATA_SCOPES.includes(scope) ? OPEN_DATA_KEY : scope),
        hydration: hydrationHealth,
        searchIndex: searchIndexState,
        estimates: () => reads.estimator.state(),
        valuation: () => valuation.state(),
        webhooks: async () => {
          const queue = await webhooks.queue(clock().toISOString());
          const { running, inFlight, lastError, lastErrorAt } = dispatcher.state();
          return {
            running,
            inFlight,
            pending: queue.pending,
            due: queue.due,
            oldestDueAt: queue.oldestDueAt,
            deadLetters: queue.dead,
            lastError,
            lastErrorAt,
          };
        },
      },
      metrics,
      // NYC Open Data's scopes run on their own schedule.
      nextRefreshAt: (scope, lastSuccessAt) =>
        (OPEN_DATA_SCOPES.includes(scope) ? openDataScheduler : scheduler).nextRefreshAt(lastSuccessAt),
      apiOnly: options.apiOnly,
      clock,
      logger,
    });
    if (options.scheduler ?? config.syncIntervalSeconds > 0) scheduler.start();
    if (options.scheduler ?? true) openDataScheduler.start();
    if (options.webhooks ?? true) dispatcher.start();
    metrics.observe({
      upstreams: () => [
        { upstream: 'listings', circuit: client.circuitState(), queued: client.queued() },
        { upstream: 'open-data', circuit: sodaClient.circuitState(), queued: 0 },
      ],
      hydration: hydrationHealth,
      searchIndex: searchIndexState,
      estimates: () => reads.estimator.state(),
      valuation: () => valuation.state(),
      webhooks: async () => {
        const now = clock();
        const queue = await webhooks.queue(now.toISOString());
        return {
          pending: queue.pending,
          due: queue.due,
          dead: queue.dead,
          oldestDueAgeSeconds: queue.oldestDueAt ? Math.max(0, (now.getTime() - Date.parse(queue.oldestDueAt)) / 1000) : 0,
        };
      },
      databasePool: () =>
        store.pool ? { total: store.pool.totalCount, idle: store.pool.idleCount, waiting: store.pool.waitingCount } : null,
    });
    if (config.metricsPort !== null) {
      metricsServer = await startMetricsServer(metrics, config.host, config.metricsPort);
      logger.info({ url: metricsServer.url }, 'metrics served');
    }
    let closing: Promise<void> | null = null;
    return {
      config,
      store,
      upstream,
      soda,
      cityRecords,
      openData,
      openDataScheduler,
      marketClock,
      client,
      syncer,
      firstSync,
      hydration,
      coordinator,
      scheduler,
      reads,
      valuation,
      keys,
      listings,
      scopes,
      changes,
      webhooks,
      dispatcher,
      redis,
      billing,
      stripe,
      metrics,
      metricsServer,
      app,
      logger,
      // Idempotent: a second call waits for the first.
      close: () =>
        (closing ??= (async () => {
          scheduler.stop();
          hydration.stop();
          openDataScheduler.stop();
          await dispatcher.stop();
          await metricsServer?.close();
          changeTail.close();
          await app.close();
          await quotas.close();
          keyChanges?.close();
          redis?.disconnect();
          await stripe?.close();
          await coordinator.idle();
          await upstreams?.close();
          await store.close();
        })()),
    };
  } catch (error) {
    await metricsServer?.close();
    keyChanges?.close();
    redis?.disconnect();
    await stripe?.close();
    await upstreams?.close();
    await store.close();
    throw error;
  }
}

/** The two upstreams' clients, with the local emulators started where no URL is set. */
interface Upstreams {
  /** The local listings site (null with `UPSTREAM_URL` set), and its market clock. */
  upstream: LocalUpstream | null;
  marketClock: MarketClock | null;
  client: GraphqlUpstreamClient;
  /** The local SODA emulator (null with `OPEN_DATA_URL` set). */
  soda: LocalSoda | null;
  sodaClient: SodaClient;
  /** Stops the local emulators. */
  close: () => Promise<void>;
}

/**
 * The listings site's client and NYC Open Data's, each against its URL, or against a local emulator started on
 * loopback when none is set (the site's from the site data, SODA's from the shared data).
 * @throws Error when an emulator cannot start (one already started is stopped first).
 */
async function startUpstreams(
  config: Config,
  options: RuntimeOptions,
  deps: { clock: () => Date; logger: Logger; metrics: Metrics },
): Promise<Upstreams> {
  const { clock, logger, metrics } = deps;
  let upstream: LocalUpstream | null = null;
  let marketClock: MarketClock | null = null;
  let soda: LocalSoda | null = null;
  const close = async () => {
    await upstream?.close();
    await soda?.close();
  };
  try {
    if (!config.upstreamUrl) {
      const site = await startLocalSite(config, {
        clock,
        siteData: options.siteData,
        manualMarketClock: options.manualMarketClock,
        recordQueries: options.recordUpstreamQueries,
      });
      ({ upstream, marketClock } = site);
      logger.info(
        { url: site.upstream.url, admin: site.upstream.adminUrl, listings: site.listings, marketClock: !!marketClock },
        'local upstream started',
      );
    }
    if (!config.openData.url) {
      soda = await startLocalSoda(cityDatasets(config.sharedDataDir), { faults: parseFaults(config.localSodaFaults) });
    }
  } catch (error) {
    await close();
    throw error;
  }
  const client = new GraphqlUpstreamClient({
    url: config.upstreamUrl ?? upstream!.url,
    timeoutSeconds: config.upstreamTimeoutSeconds,
    headers: config.upstreamHeaders,
    blockBackoffSeconds: config.upstreamBlockBackoffSeconds,
    concurrency: config.upstreamConcurrency,
    pacingSeconds: config.upstreamPacingSeconds,
    maxAttempts: config.upstreamMaxAttempts,
    breakerThreshold: config.upstreamBreakerThreshold,
    breakerHalfOpenSeconds: config.upstreamBreakerHalfOpenSeconds,
    maxQueued: config.upstreamMaxQueued,
    logger,
    metrics,
  });
  const sodaClient = new SodaClient({
    url: config.openData.url ?? soda!.url,
    appToken: config.openData.appToken,
    timeoutSeconds: config.upstreamTimeoutSeconds * 4,
    maxAttempts: config.upstreamMaxAttempts,
    breakerThreshold: config.upstreamBreakerThreshold,
    breakerHalfOpenSeconds: config.upstreamBreakerHalfOpenSeconds,
    logger,
    metrics,
  });
  return { upstream, marketClock, client, soda, sodaClient, close };
}

/**
 * A Redis client that never makes a request wait: no offline queue (commands fail at once while
 * disconnected), short connect and command timeouts, one retry, reconnection in the background.
 * Connection errors are logged once per outage.
 */
function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    connectTimeout: 500,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 250, 5000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) logger.warn({ err: error.message }, 'redis unreachable: rate limits fall back to in-process counters');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis reachable again: shared rate limits resume');
    down = false;
  });
  return redis;
}
