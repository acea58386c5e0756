/**
 * The background thread's entry (runtime/background-thread.ts starts it): the service's background work, as the
 * worker of several instances does it (`sync --watch`), in a thread of `serve`'s own process. It starts the local
 * emulators when no upstream URL is set, runs the first sync of an empty mirror, the schedules, hydration, the
 * valuation and the webhook deliveries, and answers the API thread's requests (refreshes a request started, its
 * metrics); it reports its state after each change and every second. Its own store connections write; the API thread
 * reads what they wrote as another instance's writes.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from 'pino';
import { loadConfig } from '../config.js';
import { AREAS_SCOPE, OPEN_DATA_KEY, scopeKey } from '../store/scopes-repository.js';
import type { Runtime } from '../runtime.js';
import { SERVICE_VERSION } from '../version.js';
import {
  type BackgroundMessage,
  type BackgroundState,
  type BackgroundWorkerData,
  postedError,
  type RequestMessage,
  STATE_EVERY_MS,
} from './background-protocol.js';

const port = parentPort!;
const given = workerData as BackgroundWorkerData;
const post = (message: BackgroundMessage) => port.postMessage(message);

/** The thread's logger: the same lines as the API thread's, written to standard error by this thread itself. */
async function threadLogger(level: string): Promise<Logger> {
  const [{ createLogger }, { default: pino }] = await Promise.all([import('../app.js'), import('pino')]);
  if (!given.tty) return createLogger(level, pino.destination(2));
  const { default: pretty } = await import('pino-pretty');
  return createLogger(level, pretty({ destination: 2, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}

/** The state {@link BackgroundState} describes, read off the runtime now. */
function stateOf(runtime: Runtime): BackgroundState {
  const { client, syncer, hydration, valuation, dispatcher, coordinator, firstSync, store } = runtime;
  const dispatched = dispatcher.state();
  return {
    crawlReports: syncer.crawlReports(),
    running: coordinator.keys(),
    upstream: {
      circuit: client.circuitState(),
      queued: client.queued(),
      blockedUntil: client.blockedUntil(),
      droppedFields: client.droppedFields(),
    },
    openDataCanRefresh: runtime.openData.canRefresh(),
    hydration: { ...syncer.hydrationProgress(), ...hydration.state() },
    valuation: valuation.state(),
    walCheckpoints: store.checkpoints?.state() ?? null,
    webhooks: {
      running: dispatched.running,
      inFlight: dispatched.inFlight,
      lastError: dispatched.lastError,
      lastErrorAt: dispatched.lastErrorAt,
    },
    firstSync: firstSync?.state() ?? null,
  };
}

/** Answers one request of the API thread ({@link RequestMessage}). */
async function answer(runtime: Runtime, request: RequestMessage): Promise<unknown> {
  const { syncer, coordinator } = runtime;
  switch (request.method) {
    case 'syncScope': {
      // Through this thread's coordinator: a request's refresh joins the scheduled one of the same scope.
      const [kind, boroughId] = request.args;
      const key = scopeKey(kind, boroughId);
      coordinator.trigger(key, () => syncer.syncScope(kind, boroughId));
      return coordinator.wait(key);
    }
    case 'syncAreas':
      coordinator.trigger(AREAS_SCOPE, () => syncer.syncAreas());
      return coordinator.wait(AREAS_SCOPE);
    case 'syncOpenData':
      coordinator.trigger(OPEN_DATA_KEY, () => runtime.openData.syncAll());
      return coordinator.wait(OPEN_DATA_KEY);
    case 'refreshListing':
      return syncer.refreshListing(...request.args);
    case 'refreshBuilding':
      return syncer.refreshBuilding(...request.args);
    case 'hydrate':
      return syncer.hydrate(...request.args);
    case 'metrics':
      return runtime.metrics.json();
    case 'close':
      return runtime.close();
  }
}

async function main(): Promise<void> {
  // The API thread serves the metrics (this thread's among them) on METRICS_PORT.
  const config = { ...loadConfig(), metricsPort: null };
  if (config.tracing.endpoint) {
    const { startTracing } = await import('../telemetry/tracing.js');
    await startTracing({ endpoint: config.tracing.endpoint, serviceName: config.tracing.serviceName, version: SERVICE_VERSION });
  }
  // Linux: this thread's own priority (the threads it starts inherit it), not the process's.
  if (given.nice) setPriority(given.nice);
  const logger = await threadLogger(config.logLevel);
  const { startRuntime } = await import('../runtime.js');
  const runtime = await startRuntime(config, { logger, initialSync: 'background', billing: false, inBackgroundThread: true });
  let reported = '';
  const report = () => {
    const state = stateOf(runtime);
    const text = JSON.stringify(state);
    if (text !== reported) post({ type: 'state', state });
    reported = text;
  };
  const timer = setInterval(report, STATE_EVERY_MS / 4);
  const forced = setInterval(() => {
    reported = '';
  }, STATE_EVERY_MS);
  report();
  port.on('message', (request: RequestMessage) => {
    answer(runtime, request).then(
      (result) => {
        if (request.method === 'close') {
          clearInterval(timer);
          clearInterval(forced);
        } else report();
        post({
          type: 'answer',
          id: request.id,
          result: ['syncScope', 'syncAreas', 'syncOpenData', 'close'].includes(request.method) ? undefined : result,
        });
        if (request.method === 'close') port.close();
      },
      (error: unknown) => post({ type: 'answer', id: request.id, error: postedError(error) }),
    );
  });
  post({
    type: 'ready',
    upstreamUrl: config.upstreamUrl ?? runtime.upstream!.url,
    upstreamAdminUrl: runtime.upstream?.adminUrl ?? null,
    openDataUrl: config.openData.url ?? runtime.soda!.url,
  });
}

// The cause as the API thread would have thrown it, had it started the runtime itself (the command line prints it).
main().catch((error: Error) => post({ type: 'failed', error: error.message }));
