import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { BackgroundJobs } from '../http/routes/health.js';
import { OPEN_DATA_KEY, OPEN_DATA_SCOPES } from '../store/scopes-repository.js';
import type { WebhooksRepository } from '../store/webhooks-repository.js';
import type { Syncer } from '../sync/syncer.js';
import type { UpstreamClient } from '../upstream/client.js';
import { type BackgroundThread, startBackgroundThread } from './background-thread.js';
import type { RuntimeOptions } from './options.js';

/** The nice value of the background thread: requests come before syncs on a busy machine (Linux: one a thread). */
const BACKGROUND_NICE = 10;

/** The background thread of `serve` (`options.backgroundThread`), and what the API thread then runs with. */
export interface BackgroundPart {
  thread: BackgroundThread | null;
  /** The configuration of the API thread: the upstreams the thread's emulators serve, no checkpoints of its own. */
  config: Config;
  /** The options of the API thread: with a thread, no sync, schedule, hydration, valuation or delivery of its own. */
  options: RuntimeOptions;
  /** Stops the thread (null: nothing). */
  stop: () => Promise<void>;
}

/**
 * With `options.backgroundThread`, starts the background thread (runtime/background-worker.ts: the emulators, the
 * first sync, the schedules, hydration, the valuation, the webhook deliveries) and gives the API thread its
 * configuration and options; otherwise gives them back as they are.
 * @throws Error when the thread fails to start.
 */
export async function startBackgroundPart(config: Config, options: RuntimeOptions, logger: Logger): Promise<BackgroundPart> {
  if (!options.backgroundThread) return { thread: null, config, options, stop: async () => undefined };
  const thread = await startBackgroundThread({ nice: BACKGROUND_NICE, tty: process.stderr.isTTY === true, logger });
  return {
    thread,
    config: {
      ...config,
      upstreamUrl: thread.upstreamUrl,
      openData: { ...config.openData, url: thread.openDataUrl },
      walCheckpointSeconds: 0,
    },
    options: { ...options, initialSync: false, initialOpenDataSync: false, scheduler: false, webhooks: false },
    stop: () => thread.close(),
  };
}

/** The upstream's state as /v1/health shows it, from the background thread's client (the API thread's asks nothing). */
export function threadUpstream(
  thread: BackgroundThread,
): Pick<UpstreamClient, 'circuitState' | 'queued' | 'blockedUntil' | 'droppedFields'> {
  return {
    circuitState: () => thread.state().upstream.circuit,
    queued: () => thread.state().upstream.queued,
    blockedUntil: () => thread.state().upstream.blockedUntil,
    droppedFields: () => thread.state().upstream.droppedFields,
  };
}

/**
 * The background jobs' state for /v1/health when they run in the background thread: what the thread reported, with
 * the counts of the store (hydration's backlog, the webhook queue) read here.
 */
export function threadJobsHealth(
  thread: BackgroundThread,
  deps: { syncer: Syncer; webhooks: WebhooksRepository; clock: () => Date },
): Omit<BackgroundJobs, 'searchIndex' | 'estimates'> {
  return {
    crawlReports: () => thread.state().crawlReports,
    running: (scope) => thread.state().running.includes(OPEN_DATA_SCOPES.includes(scope) ? OPEN_DATA_KEY : scope),
    hydration: async () => {
      const [backlog, parked] = await Promise.all([deps.syncer.backlog(), deps.syncer.parked()]);
      const { hydrated, running, failedBatches, lastError, lastErrorAt, lastCompletedAt, nextAttemptAt } = thread.state().hydration;
      return { backlog, parked, hydrated, running, failedBatches, lastError, lastErrorAt, lastCompletedAt, nextAttemptAt };
    },
    valuation: () => thread.state().valuation,
    walCheckpoints: () => thread.state().walCheckpoints,
    webhooks: async () => {
      const { pending, due, oldestDueAt, dead: deadLetters } = await deps.webhooks.queue(deps.clock().toISOString());
      return { ...thread.state().webhooks, pending, due, oldestDueAt, deadLetters };
    },
  };
}
