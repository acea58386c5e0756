import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { startMetricsServer, type MetricsServer } from '../metrics/metrics-server.js';
import type { MetricJson, MetricSources, Metrics } from '../metrics/metrics.js';
import type { BackgroundThread } from './background-thread.js';
import type { RuntimeOptions } from './options.js';
import type { Store } from '../store/database.js';
import type { StorePart } from './store-part.js';
import type { Upstreams } from './upstreams.js';
import type { Jobs } from './jobs.js';
import type { ReadSide } from './read-side.js';

/**
 * Points the metrics at what they read (the upstreams, the jobs, the read side, the database pool), and serves them
 * on `METRICS_PORT` when it is set. With a background thread (`thread`), this thread observes what it answers with,
 * the thread what it runs, and a scrape here adds the thread's metrics; the thread itself (`role.inBackgroundThread`)
 * serves none. Returns the server (null when none).
 * @throws Error when the port cannot be listened on.
 */
export async function startMetricsPart(
  config: Config,
  deps: {
    metrics: Metrics;
    tables: StorePart;
    upstreams: Upstreams;
    jobs: Jobs;
    readSide: ReadSide;
    thread: BackgroundThread | null;
    role: RuntimeOptions;
    clock: () => Date;
    logger: Logger;
  },
): Promise<MetricsServer | null> {
  const { metrics, upstreams, jobs, readSide, clock, thread, role } = deps;
  const store: Store = deps.tables.store;
  const background: MetricSources = {
    upstreams: () => [
      { upstream: 'listings', circuit: upstreams.client.circuitState(), queued: upstreams.client.queued() },
      { upstream: 'open-data', circuit: upstreams.sodaClient.circuitState(), queued: 0 },
    ],
    hydration: jobs.health.hydration,
    valuation: () => jobs.valuation.state(),
    walCheckpoints: () => store.checkpoints?.state() ?? null,
    webhooks: async () => {
      const now = clock();
      const queue = await deps.tables.webhooks.queue(now.toISOString());
      const oldestDueAgeSeconds = queue.oldestDueAt ? Math.max(0, (now.getTime() - Date.parse(queue.oldestDueAt)) / 1000) : 0;
      return { pending: queue.pending, due: queue.due, dead: queue.dead, oldestDueAgeSeconds };
    },
  };
  const answering: MetricSources = { searchIndex: readSide.searchIndexState, estimates: () => readSide.reads.estimator.state() };
  metrics.observe({
    ...(thread ? {} : background),
    ...(role.inBackgroundThread ? {} : answering),
    databasePool: () =>
      store.pool ? { total: store.pool.totalCount, idle: store.pool.idleCount, waiting: store.pool.waitingCount } : null,
  });
  if (thread) metrics.include(() => thread.request('metrics') as Promise<MetricJson[]>);
  if (config.metricsPort === null || role.inBackgroundThread) return null;
  const server = await startMetricsServer(metrics, config.host, config.metricsPort);
  deps.logger.info({ url: server.url }, 'metrics served');
  return server;
}
