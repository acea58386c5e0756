/**
 * The API thread's side of the background thread (BACKGROUND_THREAD, `serve`): starts it, hands it the refreshes
 * requests start, keeps its last reported state, and gives it back to /v1/health and the metrics. The thread itself is
 * runtime/background-worker.ts; what they say to each other is runtime/background-protocol.ts.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { AreaTree } from '../domain/area.js';
import type { ListingKind } from '../domain/listing.js';
import type { RefreshLock } from '../freshness/refresh-lock.js';
import type { Refresher } from '../read/read-deps.js';
import type { AreasRepository } from '../store/areas-repository.js';
import type { Building } from '../wire/building.js';
import type { Refreshes } from './read-side.js';
import {
  type BackgroundMessage,
  type BackgroundRequests,
  type BackgroundState,
  type BackgroundWorkerData,
  errorOfPosted,
  type RequestMessage,
} from './background-protocol.js';

/** The background thread as the API thread sees it. */
export interface BackgroundThread {
  /** Where the thread's local emulators listen (or the configured upstreams): the API thread's clients point there. */
  upstreamUrl: string;
  openDataUrl: string;
  /** Its last reported state ({@link BackgroundState}). */
  state(): BackgroundState;
  /** Resolves once the first sync of an empty mirror has tried every scope (at once when none runs). */
  firstSyncDone(): Promise<void>;
  /** Asks the thread for one of {@link BackgroundRequests}. @throws Error with the thread's own message when it failed */
  request<M extends keyof BackgroundRequests>(
    method: M,
    ...args: Parameters<BackgroundRequests[M]>
  ): Promise<ReturnType<BackgroundRequests[M]>>;
  /** Stops the background work (its refreshes under way end first) and the thread. */
  close(): Promise<void>;
}

/**
 * Starts the background thread (runtime/background-worker.ts, or `entry`) and resolves once its runtime is up: store
 * opened and migrated, emulators listening, the first sync of an empty mirror under way. `nice`: the thread's nice
 * value, so that on a busy machine the API's requests come first. A thread that ends later is logged and started again
 * after 1 s, doubling to a minute; meanwhile requests of it fail at once and its state says why.
 * @throws Error when the thread fails to start (its cause), or ends before it is up.
 */
export async function startBackgroundThread(options: {
  nice: number;
  tty: boolean;
  logger: Logger;
  entry?: URL;
}): Promise<BackgroundThread> {
  const thread = new RestartingThread(options.entry ?? new URL('./background-worker.js', import.meta.url), options);
  await thread.start();
  return thread;
}

/** Longest wait before a thread that ended is started again (milliseconds). */
const MAX_RESTART_DELAY_MS = 60_000;

/** A call waiting for its answer. */
type Waiting = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** {@link BackgroundThread}, started again whenever it ends unasked. */
class RestartingThread implements BackgroundThread {
  upstreamUrl = '';
  openDataUrl = '';
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private latest: BackgroundState | null = null;
  private readonly stateWaiters: (() => void)[] = [];
  /** Why the thread is not running, while it is not, and when it is started again (UTC). */
  private down: { error: Error; at: string; retryAt: string } | null = null;
  private failures = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly entry: URL,
    private readonly options: { nice: number; tty: boolean; logger: Logger },
  ) {}

  /** Starts a thread; resolves once it is up. @throws Error its cause, when it failed to start */
  async start(): Promise<void> {
    const data: BackgroundWorkerData = { tty: this.options.tty, nice: this.options.nice };
    const worker = new Worker(this.entry, { workerData: data });
    this.worker = worker;
    let cause: Error | null = null;
    const ready = new Promise<Extract<BackgroundMessage, { type: 'ready' }>>((resolve, reject) => {
      worker.on('message', (message: BackgroundMessage) => {
        if (message.type === 'ready') resolve(message);
        else if (message.type === 'failed') {
          cause = new Error(message.error);
          void worker.terminate();
        } else this.received(message);
      });
      worker.on('error', (error) => {
        cause = error;
      });
      worker.on('exit', (code) => {
        const error = cause ?? new Error(`the background thread ended (exit code ${code})`);
        reject(error);
        if (this.worker === worker) this.ended(error);
      });
    });
    const urls = await ready;
    this.upstreamUrl = urls.upstreamUrl;
    this.openDataUrl = urls.openDataUrl;
  }

  private received(message: Exclude<BackgroundMessage, { type: 'ready' | 'failed' }>): void {
    if (message.type === 'state') {
      this.latest = message.state;
      this.down = null;
      this.failures = 0;
      for (const wake of this.stateWaiters.splice(0)) wake();
      return;
    }
    const call = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    if (message.error !== undefined) call?.reject(errorOfPosted(message.error));
    else call?.resolve(message.result);
  }

  /** The thread ended: its calls fail, and unless the service is closing it is started again after a wait. */
  private ended(error: Error): void {
    this.worker = null;
    for (const call of this.waiting.values()) call.reject(error);
    this.waiting.clear();
    for (const wake of this.stateWaiters.splice(0)) wake();
    if (this.closing || !this.latest) return;
    const delay = Math.min(1000 * 2 ** this.failures++, MAX_RESTART_DELAY_MS);
    const now = Date.now();
    this.down = { error, at: new Date(now).toISOString(), retryAt: new Date(now + delay).toISOString() };
    this.options.logger.error(
      { err: error.message, restartAt: this.down.retryAt },
      'the background thread ended: no sync, hydration or webhook delivery runs until it is started again',
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.start().then(
        () => this.options.logger.warn({ after: this.failures }, 'the background thread started again'),
        // A thread that failed to start has ended: `ended` waits longer and tries again.
        () => undefined,
      );
    }, delay);
    this.restartTimer.unref();
  }

  state(): BackgroundState {
    const latest = this.latest!;
    if (!this.down) return latest;
    // While it is down, nothing of it runs: the last state, with why and when it is tried again.
    const { error, at, retryAt } = this.down;
    return {
      ...latest,
      running: [],
      hydration: { ...latest.hydration, running: false, lastError: error.message, lastErrorAt: at, nextAttemptAt: retryAt },
      webhooks: { ...latest.webhooks, running: false, inFlight: 0, lastError: error.message, lastErrorAt: at },
      valuation: { ...latest.valuation, running: false },
    };
  }

  async firstSyncDone(): Promise<void> {
    while (this.latest?.firstSync && !this.latest.firstSync.done && !this.closing)
      await new Promise<void>((wake) => this.stateWaiters.push(wake));
  }

  request<M extends keyof BackgroundRequests>(
    method: M,
    ...args: Parameters<BackgroundRequests[M]>
  ): Promise<ReturnType<BackgroundRequests[M]>> {
    return new Promise((resolve, reject) => {
      const worker = this.worker;
      if (!worker) return reject(this.down?.error ?? new Error('the background thread is not running'));
      const id = this.nextId++;
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, method, args } as RequestMessage);
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.restartTimer) clearTimeout(this.restartTimer);
      const worker = this.worker;
      if (!worker) return;
      await this.request('close').catch(() => undefined);
      await worker.terminate();
    })();
    return this.closing;
  }
}

/** The read side's refreshes ({@link Refreshes}) done by the background thread. */
export function threadRefreshes(thread: BackgroundThread, areas: AreasRepository, cityPolygons: Refreshes['cityPolygons']): Refreshes {
  return {
    refresher: threadRefresher(thread, areas),
    openData: {
      canRefresh: () => thread.state().openDataCanRefresh,
      // The datasets that failed are the thread's to log and show (the scopes' last errors).
      syncAll: async () => {
        await thread.request('syncOpenData');
        return [];
      },
    },
    cityPolygons,
  };
}

/**
 * The {@link Refresher} of the API thread: each refresh done by the background thread (through its coordinator, so
 * that a request's refresh joins a scheduled one), the area tree read from the store.
 */
function threadRefresher(thread: BackgroundThread, areas: AreasRepository): Refresher {
  const refresher: Refresher = {
    syncScope: (kind: ListingKind, boroughId: number) => thread.request('syncScope', kind, boroughId),
    async areaTree(): Promise<AreaTree> {
      const stored = await areas.tree();
      return stored.areas.length ? stored : refresher.syncAreas();
    },
    async syncAreas(): Promise<AreaTree> {
      await thread.request('syncAreas');
      // Read past the kept tree: the other thread's write is not this one's.
      return new AreaTree(await areas.list());
    },
    refreshListing: (id, kind, priority = 'background') => thread.request('refreshListing', id, kind, priority),
    refreshBuilding: async (idOrSlug, priority = 'background') =>
      (await thread.request('refreshBuilding', idOrSlug, priority)) as Building | null,
    hydrate: (kind, ids, priority = 'background') => thread.request('hydrate', kind, ids, priority),
    canRefresh: () => thread.state().upstream.circuit !== 'open',
  };
  return refresher;
}

/**
 * The refresh lock of the API thread: held while the background thread runs or queues a refresh of the key (a
 * search of a scope its first sync has not reached yet is so `refreshing`). Taking it always succeeds: the background
 * thread's coordinator joins a refresh asked twice.
 */
export function threadLock(thread: BackgroundThread): RefreshLock {
  return {
    acquire: async () => async () => undefined,
    isHeld: async (key) => thread.state().running.includes(key),
  };
}
