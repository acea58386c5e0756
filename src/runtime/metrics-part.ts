import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { startMetricsServer, type MetricsServer } from '../metrics/metrics-server.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/database.js';
import type { StorePart } from './store-part.js';
import type { Upstreams } from './upstreams.js';
import type { Jobs } from './jobs.js';
import type { ReadSide } from './read-side.js';

/**
 * Points the metrics at what they read (the upstreams, the jobs, the read side, the database pool), and serves them
 * on `METRICS_PORT` when it is set. Returns the server (null when unset).
 * @throws Error when the port cannot be listened on.
 */
export async function startMetricsPart(
  config: Config,
  deps: { metrics: Metrics; tables: StorePart; upstreams: Upstreams; jobs: Jobs; readSide: ReadSide; clock: () => Date; logger: Logger },
): Promise<MetricsServer | null> {
  const { metrics, upstreams, jobs, readSide, clock } = deps;
  const store: Store = deps.tables.store;
  metrics.observe({
    upstreams: () => [
      { upstream: 'listings', circuit: upstreams.client.circuitState(), queued: upstreams.client.queued() },
      { upstream: 'open-data', circuit: upstreams.sodaClient.circuitState(), queued: 0 },
    ],
    hydration: jobs.health.hydration,
    searchIndex: readSide.searchIndexState,
    estimates: () => readSide.reads.estimator.state(),
    valuation: () => jobs.valuation.state(),
    walCheckpoints: () => store.checkpoints?.state() ?? null,
    webhooks: async () => {
      const now = clock();
      const queue = await deps.tables.webhooks.queue(now.toISOString());
      const oldestDueAgeSeconds = queue.oldestDueAt ? Math.max(0, (now.getTime() - Date.parse(queue.oldestDueAt)) / 1000) : 0;
      return { pending: queue.pending, due: queue.due, dead: queue.dead, oldestDueAgeSeconds };
    },
    databasePool: () =>
      store.pool ? { total: store.pool.totalCount, idle: store.pool.idleCount, waiting: store.pool.waitingCount } : null,
  });
  if (config.metricsPort === null) return null;
  const server = await startMetricsServer(metrics, config.host, config.metricsPort);
  deps.logger.info({ url: server.url }, 'metrics served');
  return server;
}
