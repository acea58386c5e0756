import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Estimator } from '../estimate/estimator.js';
import { Valuation } from '../estimate/valuation.js';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import type { BackgroundJobs } from '../http/routes/health.js';
import type { Metrics } from '../metrics/metrics.js';
import { ChangeTail } from '../notify/change-tail.js';
import { WebhookDispatcher } from '../notify/webhook-dispatcher.js';
import type { AreaTree } from '../domain/area.js';
import { OPEN_DATA_KEY, OPEN_DATA_SCOPES } from '../store/scopes-repository.js';
import { FirstSync } from '../sync/first-sync.js';
import { HydrationJob } from '../sync/hydration-job.js';
import { OpenDataScheduler } from '../sync/open-data-scheduler.js';
import { SyncScheduler } from '../sync/scheduler.js';
import type { RuntimeOptions } from './options.js';
import type { StorePart } from './store-part.js';
import type { SyncPart } from './sync-part.js';

/** The background jobs: hydration, the valuation, the two schedules, the first sync, the change log's tail and the webhook deliveries. */
export interface Jobs {
  hydration: HydrationJob;
  valuation: Valuation;
  scheduler: SyncScheduler;
  openDataScheduler: OpenDataScheduler;
  /** The first sync of an empty mirror, when run in the background (`initialSync: 'background'`); null otherwise. */
  firstSync: FirstSync | null;
  changeTail: ChangeTail;
  dispatcher: WebhookDispatcher;
  /** Their state, as /v1/health shows it (the search index and the estimates are the read side's, given to it). */
  health: Omit<BackgroundJobs, 'searchIndex' | 'estimates'>;
  /** When a scope whose last success was at `lastSuccessAt` is next due: NYC Open Data's scopes run on their own schedule. */
  nextRefreshAt: (scope: string, lastSuccessAt: string | null) => string | null;
  /** Resumes a hydration backlog, and starts the schedules and the deliveries the options ask for. */
  start: () => Promise<void>;
  /** Stops them, waiting for deliveries in flight. */
  stop: () => Promise<void>;
}

/** What the background jobs run over. */
type JobDeps = {
  tables: StorePart;
  sync: SyncPart;
  coordinator: RefreshCoordinator;
  estimator: Estimator;
  areaTree: () => Promise<AreaTree>;
  clock: () => Date;
  logger: Logger;
  metrics: Metrics;
};

/**
 * Builds the background jobs over the syncs. Nothing runs before `start()`, which resumes a hydration backlog left
 * by an earlier run (a first sync in the background resumes it itself once every scope is in).
 */
export function buildJobs(config: Config, options: RuntimeOptions, deps: JobDeps): Jobs {
  const { tables, coordinator, clock, logger, metrics } = deps;
  const { syncer, openData } = deps.sync;
  const valuation = new Valuation({
    db: tables.store.readDb,
    listings: tables.listings,
    estimator: deps.estimator,
    // An API-only instance syncs nothing: its worker values; so does `serve`'s background thread.
    enabled: config.pricePositions && !options.apiOnly && !options.backgroundThread,
    warn: (message, error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, message),
    clock,
  });
  const hydration = new HydrationJob({
    ...{ syncer, coordinator, clock, logger },
    afterRun: async () => {
      await syncer.recordMarkets();
      // Recorded sales are matched to buildings by address: the first hydration brings the buildings.
      if ((await tables.cityRecords.count('recorded_sales')) > 0) await openData.positionSales();
      // The listings as the sync left them, with their details.
      await valuation.run();
    },
  });
  const scheduler = new SyncScheduler({ syncer, hydration, scopes: tables.scopes, coordinator, clock, logger }, config.syncIntervalSeconds);
  const openDataScheduler = new OpenDataScheduler(
    { syncer: openData, scopes: tables.scopes, coordinator, clock, logger },
    config.openData.syncIntervalSeconds,
  );
  const firstSync =
    deps.sync.firstSyncNeeded && options.initialSync === 'background' ? new FirstSync({ syncer, coordinator, hydration, logger }) : null;
  const changeTail = new ChangeTail(tables.changes, config.changesStream.pollSeconds);
  const dispatcher = new WebhookDispatcher({
    ...{ webhooks: tables.webhooks, changes: tables.changes, tail: changeTail, areaTree: deps.areaTree },
    ...{ config, clock, logger, metrics },
  });
  const health = jobsHealth({ ...deps, hydration, valuation, dispatcher });
  return {
    ...{ hydration, valuation, scheduler, openDataScheduler, firstSync, changeTail, dispatcher, health },
    nextRefreshAt: (scope, lastSuccessAt) =>
      (OPEN_DATA_SCOPES.includes(scope) ? openDataScheduler : scheduler).nextRefreshAt(lastSuccessAt),
    start: async () => {
      if ((options.initialSync ?? true) !== false && !firstSync && (await syncer.backlog()) > 0) hydration.resume();
      if (options.scheduler ?? config.syncIntervalSeconds > 0) scheduler.start();
      if (options.scheduler ?? true) openDataScheduler.start();
      if (options.webhooks ?? true) dispatcher.start();
    },
    stop: async () => {
      scheduler.stop();
      hydration.stop();
      openDataScheduler.stop();
      await dispatcher.stop();
      changeTail.close();
    },
  };
}

/** The jobs' state for /v1/health, read when asked: the crawls, hydration's backlog, the valuation and the webhook queue. */
function jobsHealth(deps: JobDeps & { hydration: HydrationJob; valuation: Valuation; dispatcher: WebhookDispatcher }): Jobs['health'] {
  const { tables, coordinator, clock, hydration, valuation, dispatcher } = deps;
  const { syncer } = deps.sync;
  return {
    crawlReports: () => syncer.crawlReports(),
    running: (scope) => coordinator.isRunning(OPEN_DATA_SCOPES.includes(scope) ? OPEN_DATA_KEY : scope),
    hydration: async () => {
      const [backlog, parked] = await Promise.all([syncer.backlog(), syncer.parked()]);
      return { backlog, parked, ...syncer.hydrationProgress(), ...hydration.state() };
    },
    valuation: () => valuation.state(),
    walCheckpoints: () => tables.store.checkpoints?.state() ?? null,
    webhooks: async () => {
      const queue = await tables.webhooks.queue(clock().toISOString());
      const { running, inFlight, lastError, lastErrorAt } = dispatcher.state();
      const { pending, due, oldestDueAt, dead: deadLetters } = queue;
      return { running, inFlight, pending, due, oldestDueAt, deadLetters, lastError, lastErrorAt };
    },
  };
}
