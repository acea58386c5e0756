/**
 * What the service's two threads say to each other when `serve` runs its background work in a thread of its own
 * (BACKGROUND_THREAD, runtime/background-thread.ts): the requests the API thread makes of the background thread, and
 * the state the background thread reports. Every value crosses by structured clone: plain data only.
 */
import type { FirstSyncState } from '../sync/first-sync.js';
import type { ValuationState } from '../estimate/valuation.js';
import type { CrawlReport } from '../store/scopes-repository.js';
import type { HydrationProgress } from '../sync/hydrator.js';
import type { HydrationJobState } from '../sync/hydration-job.js';
import type { CircuitState } from '../upstream/client.js';
import type { WalCheckpointsState } from '../store/wal-checkpoints.js';
import { UpstreamError, type UpstreamFailure } from '../upstream/errors.js';

/** What the API thread hands the background thread when it starts it. */
export interface BackgroundWorkerData {
  /** Whether the process's standard error is a terminal: the log lines are then made readable, as the API thread's are. */
  tty: boolean;
  /** The nice value the thread runs at (Linux gives each thread its own): above the API thread's, so that requests come first. */
  nice: number;
}

/** The background thread's state, sent after every change it makes and at least every {@link STATE_EVERY_MS}. */
export interface BackgroundState {
  /** The last crawl report of each listing scope (/v1/health). */
  crawlReports: CrawlReport[];
  /** The refreshes running or queued in the background thread, by coordinator key (a scope, `areas`, `open-data`). */
  running: string[];
  /** The listings site's client: its circuit breaker, queue, bot block and fields dropped (/v1/health). */
  upstream: { circuit: CircuitState; queued: number; blockedUntil: string | null; droppedFields: string[] };
  /** Whether NYC Open Data's sync may run now (its client's breaker is not open). */
  openDataCanRefresh: boolean;
  hydration: HydrationProgress & HydrationJobState;
  valuation: ValuationState;
  walCheckpoints: WalCheckpointsState | null;
  /** The webhook dispatcher's own state (the queue is read from the store). */
  webhooks: { running: boolean; inFlight: number; lastError: string | null; lastErrorAt: string | null };
  /** The first sync of an empty mirror, when one runs (null otherwise). */
  firstSync: FirstSyncState | null;
}

/** How often the background thread reports its state when nothing changed (milliseconds). */
export const STATE_EVERY_MS = 1000;

/** The requests the API thread makes: each answered once, with its result or its error ({@link PostedError}). */
export interface BackgroundRequests {
  syncScope(kind: 'rental' | 'sale', boroughId: number): void;
  syncAreas(): void;
  /** NYC Open Data's sync of every dataset (its refresh, as a request of stale city records starts it). */
  syncOpenData(): void;
  refreshListing(id: string, kind: 'rental' | 'sale' | undefined, priority: 'interactive' | 'background'): boolean;
  refreshBuilding(idOrSlug: string, priority: 'interactive' | 'background'): unknown;
  hydrate(kind: 'rental' | 'sale', ids: string[], priority: 'interactive' | 'background'): string[];
  /** The background thread's metrics, as prom-client's `getMetricsAsJSON` gives them. */
  metrics(): unknown[];
  /** Stops the background work and closes its store; the thread then ends. */
  close(): void;
}

/** A request, by name and arguments, with the id its answer carries. */
export type RequestMessage = {
  [M in keyof BackgroundRequests]: { id: number; method: M; args: Parameters<BackgroundRequests[M]> };
}[keyof BackgroundRequests];

/** What the background thread posts: its readiness (with its emulators' addresses), its state, or an answer. */
export type BackgroundMessage =
  | { type: 'ready'; upstreamUrl: string; openDataUrl: string; upstreamAdminUrl: string | null }
  | { type: 'state'; state: BackgroundState }
  | { type: 'answer'; id: number; result?: unknown; error?: PostedError }
  | { type: 'failed'; error: string };

/**
 * An error as it crosses from the background thread to the API thread, which a posted `Error` does not survive whole:
 * its message, and what the API's answer to the request that waited on it depends on (src/http/plugins/errors.ts). An upstream's
 * failure is a 502 or a 504 with its kind; a database's error code may make it a 503.
 */
export interface PostedError {
  message: string;
  /** An {@link UpstreamError}'s kind and HTTP status. */
  upstream?: { failure: UpstreamFailure; status?: number };
  /** The error's `code` (a SQLSTATE, an errno's name, SQLite's), when it has one. */
  code?: string;
}

/** `error` as the background thread posts it ({@link PostedError}). */
export function postedError(error: unknown): PostedError {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as Error & { code?: unknown }).code;
  return {
    message: error.message,
    ...(error instanceof UpstreamError ? { upstream: { failure: error.failure, status: error.status } } : {}),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/** The error the API thread raises for a posted one: an {@link UpstreamError} again when it was one, its `code` kept. */
export function errorOfPosted(posted: PostedError): Error {
  const error = posted.upstream
    ? new UpstreamError(posted.upstream.failure, posted.message, posted.upstream.status)
    : new Error(posted.message);
  if (posted.code !== undefined) Object.assign(error, { code: posted.code });
  return error;
}
