import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BrokenCircuitError,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  retry,
  wrap,
  CircuitState as BreakerState,
  type IPolicy,
} from 'cockatiel';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { request } from 'undici';
import { countedRequest, UpstreamError } from './errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { SITE_HEADERS } from './site-headers.js';
import { areasQuery, buildingsQuery, detailsQuery, EnumToken, searchQuery } from './queries.js';
import type { SiteArea, UpstreamBuildingDetail, UpstreamListingDetail, UpstreamSearchAnswer, UpstreamSearchInput } from './types.js';

/**
 * Who waits for an upstream call: `interactive` (a caller of the API is waiting: served first, and
 * refused with `busy` when too many already wait) or `background` (refreshes and crawls).
 */
export type UpstreamPriority = 'interactive' | 'background';

/** State of the circuit breaker: `open` refuses calls now; `half-open` lets the next call try. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** What the service asks of an upstream listings site. Every method raises {@link UpstreamError}. */
export interface UpstreamClient {
  areas(): Promise<SiteArea[]>;
  search(kind: 'sale' | 'rental', input: UpstreamSearchInput): Promise<UpstreamSearchAnswer>;
  /** Details of many listings in one request, by id; null for an id the site does not have. */
  listingDetails(kind: 'sale' | 'rental', ids: string[], priority?: UpstreamPriority): Promise<Map<string, UpstreamListingDetail | null>>;
  /** The buildings of many listings in one request, by listing id; null when the site has none. */
  buildingsOfListings(
    kind: 'sale' | 'rental',
    ids: string[],
    priority?: UpstreamPriority,
  ): Promise<Map<string, UpstreamBuildingDetail | null>>;
  circuitState(): CircuitState;
  /** Calls waiting for their turn (not yet sent). */
  queued(): number;
  /** While a bot block is being waited out: until when (UTC ISO 8601); else null. */
  blockedUntil(): string | null;
  /** Fields the site rejected and the client no longer asks for, as `Type.field`. */
  droppedFields(): string[];
}

/** How many times one request is re-sent without fields the site rejected. */
const MAX_DRIFT_RETRIES = 5;

export interface GraphqlClientOptions {
  url: string;
  timeoutSeconds: number;
  /** Attempts for a transient failure (timeout, network, 5xx), including the first. */
  maxAttempts?: number;
  /** Requests in flight at once, and the least seconds between the starts of two requests. */
  concurrency?: number;
  pacingSeconds?: number;
  /** Consecutive failures that open the breaker, and seconds before it lets one call through. */
  breakerThreshold?: number;
  breakerHalfOpenSeconds?: number;
  /** Calls that may wait for their turn; an interactive call beyond this fails at once with `busy`. */
  maxQueued?: number;
  /** Seconds to wait out a 403 bot block before asking again (default 1,800: clients say retries extend a ban). */
  blockBackoffSeconds?: number;
  /** Headers sent with every request (default {@link SITE_HEADERS}). */
  headers?: Record<string, string>;
  /** Where breaker state changes are logged (once per change). */
  logger?: Logger;
  /** Where each request is counted by outcome. */
  metrics?: Metrics;
}

/**
 * GraphQL client over undici for the upstream site (or the local upstream, which speaks the same
 * protocol): `POST {url}` with `{query, variables}`, a timeout per attempt, retries with jittered
 * exponential backoff for transient failures, a circuit breaker over consecutive failures, and pacing:
 * at most `concurrency` requests at once, their starts at least `pacingSeconds` apart. Waiting calls
 * form one priority queue (p-queue): interactive lookups go before background refreshes, and at most
 * `maxQueued` may wait.
 */
export class GraphqlUpstreamClient implements UpstreamClient {
  private readonly policy: IPolicy;
  private readonly breaker;
  private readonly queue: PQueue;
  private readonly halfOpenAfterMs: number;
  private openedAt = 0;
  private nextStart = 0;
  private blockedUntilMs = 0;
  /** Field names the site rejected (dropped from every query), and how each was reported. */
  private readonly dropped = new Set<string>();
  private readonly droppedAs: string[] = [];

  constructor(private readonly options: GraphqlClientOptions) {
    const retryPolicy = retry(
      handleWhen((e) => e instanceof UpstreamError && e.transient),
      { maxAttempts: Math.max(0, (options.maxAttempts ?? 3) - 1), backoff: new ExponentialBackoff({ initialDelay: 200, maxDelay: 2000 }) },
    );
    this.halfOpenAfterMs = (options.breakerHalfOpenSeconds ?? 30) * 1000;
    this.breaker = circuitBreaker(
      handleWhen((e) => e instanceof UpstreamError && e.failure !== 'graphql' && e.failure !== 'busy'),
      { halfOpenAfter: this.halfOpenAfterMs, breaker: new ConsecutiveBreaker(options.breakerThreshold ?? 5) },
    );
    const log = options.logger;
    this.breaker.onBreak(() => {
      this.openedAt = Date.now();
      log?.warn(
        { retryInSeconds: this.halfOpenAfterMs / 1000 },
        'upstream circuit opened: no upstream calls and no refreshes until it half-opens',
      );
    });
    this.breaker.onHalfOpen(() => log?.info('upstream circuit half-open: trying one call'));
    this.breaker.onReset(() => log?.info('upstream circuit closed: upstream answers again'));
    this.queue = new PQueue({ concurrency: options.concurrency ?? 1 });
    this.policy = wrap(retryPolicy, this.breaker);
  }

  /** Waits for this request's turn to start: starts are spaced `pacingSeconds` apart, plus up to half again (jitter). */
  private async pace(): Promise<void> {
    const gap = (this.options.pacingSeconds ?? 0) * 1000 * (1 + Math.random() / 2);
    if (gap <= 0) return;
    const now = Date.now();
    const start = Math.max(now, this.nextStart);
    this.nextStart = start + gap;
    if (start > now) await sleep(start - now);
  }

  /** `open` only while the breaker refuses calls: once its wait is over it reports `half-open`. */
  circuitState(): CircuitState {
    if (this.breaker.state === BreakerState.Open) return Date.now() - this.openedAt >= this.halfOpenAfterMs ? 'half-open' : 'open';
    return this.breaker.state === BreakerState.HalfOpen ? 'half-open' : 'closed';
  }

  queued(): number {
    return this.queue.size;
  }

  blockedUntil(): string | null {
    return this.blockedUntilMs > Date.now() ? new Date(this.blockedUntilMs).toISOString() : null;
  }

  droppedFields(): string[] {
    return [...this.droppedAs];
  }

  /**
   * Sends the query `build` makes from the fields not dropped. While a bot block is waited out, fails at
   * once without asking. When the site rejects named fields (drift), drops them, logs it once, and sends
   * the query again without them; a rejected `id` cannot be done without and fails the call.
   */
  private async call<T>(build: (dropped: ReadonlySet<string>) => string, priority: UpstreamPriority = 'background'): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt<T>(build(this.dropped), priority);
      } catch (error) {
        const rejected = error instanceof UpstreamError && error.failure === 'graphql' ? rejectedFields(error.message) : [];
        const droppable = rejected.filter((r) => r.field !== 'id');
        if (!droppable.length || droppable.length < rejected.length || attempt >= MAX_DRIFT_RETRIES) throw error;
        for (const { field, type } of droppable) {
          if (this.dropped.has(field)) continue;
          this.dropped.add(field);
          this.droppedAs.push(`${type}.${field}`);
          this.options.logger?.warn({ field: `${type}.${field}` }, 'upstream rejected a field: no longer asking for it');
        }
      }
    }
  }

  private async attempt<T>(query: string, priority: UpstreamPriority): Promise<T> {
    if (this.blockedUntilMs > Date.now()) {
      throw new UpstreamError(
        'blocked',
        `upstream bot block: waiting until ${new Date(this.blockedUntilMs).toISOString()} before asking again`,
        403,
      );
    }
    const maxQueued = this.options.maxQueued ?? 50;
    try {
      return await this.policy.execute(() => {
        if (priority === 'interactive' && this.queue.size >= maxQueued) {
          throw new UpstreamError('busy', `${this.queue.size} upstream calls are already waiting`);
        }
        return this.queue.add(() => countedRequest(this.options.metrics, 'listings', () => this.once<T>(query)), {
          priority: priority === 'interactive' ? 1 : 0,
        }) as Promise<T>;
      });
    } catch (error) {
      if (error instanceof UpstreamError && error.failure === 'blocked' && this.blockedUntilMs <= Date.now()) {
        this.blockedUntilMs = Date.now() + (this.options.blockBackoffSeconds ?? 1800) * 1000;
        this.options.logger?.warn(
          { until: new Date(this.blockedUntilMs).toISOString() },
          'upstream bot block (403): not asking again until then',
        );
      }
      if (error instanceof BrokenCircuitError) throw new UpstreamError('circuit-open', 'upstream circuit breaker is open');
      throw error;
    }
  }

  private async once<T>(query: string): Promise<T> {
    await this.pace();
    const timeoutMs = this.options.timeoutSeconds * 1000;
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(this.options.url, {
        method: 'POST',
        headers: this.options.headers ?? SITE_HEADERS,
        body: JSON.stringify({ query }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const e = error as Error & { code?: string };
      const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/i.test(e.code ?? '');
      throw new UpstreamError(timedOut ? 'timeout' : 'network', `upstream ${timedOut ? 'timed out' : 'unreachable'}: ${e.message}`);
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw new UpstreamError('timeout', `upstream body not received: ${(error as Error).message}`);
    }
    if (response.statusCode === 403) throw new UpstreamError('blocked', 'upstream answered 403 (bot block)', 403);
    let body: { data?: T | null; errors?: { message: string }[] };
    try {
      body = JSON.parse(text);
    } catch {
      if (response.statusCode >= 400) throw new UpstreamError('http', `upstream answered HTTP ${response.statusCode}`, response.statusCode);
      throw new UpstreamError('malformed', 'upstream answered a body that is not JSON');
    }
    // A GraphQL server answers a request it refuses (an unknown field) with errors, on HTTP 200 or 400.
    if (Array.isArray(body?.errors) && body.errors.length && response.statusCode < 500 && (!body.data || response.statusCode === 400)) {
      throw new UpstreamError('graphql', `upstream GraphQL errors: ${body.errors.map((e) => e?.message).join('; ')}`);
    }
    if (response.statusCode >= 400) throw new UpstreamError('http', `upstream answered HTTP ${response.statusCode}`, response.statusCode);
    if (!body.data || typeof body.data !== 'object') throw new UpstreamError('malformed', 'upstream answer has no data');
    return body.data;
  }

  async areas(): Promise<SiteArea[]> {
    const data = await this.call<{ areas?: SiteArea[] | null }>((dropped) => areasQuery(dropped));
    if (!Array.isArray(data.areas)) throw new UpstreamError('malformed', 'areas answer is not a list');
    return data.areas;
  }

  async search(kind: 'sale' | 'rental', input: UpstreamSearchInput): Promise<UpstreamSearchAnswer> {
    const literalInput = {
      filters: { ...input.filters, [kind === 'sale' ? 'saleStatus' : 'rentalStatus']: new EnumToken('ACTIVE') },
      page: input.page,
      perPage: input.perPage,
      sorting: { attribute: new EnumToken(input.sorting.attribute), direction: new EnumToken(input.sorting.direction) },
      userSearchToken: randomUUID(),
      adStrategy: new EnumToken('NONE'),
    };
    const data = await this.call<{ result?: UpstreamSearchAnswer | null }>((dropped) => searchQuery(kind, literalInput, dropped));
    return data.result ?? {};
  }

  async listingDetails(
    kind: 'sale' | 'rental',
    ids: string[],
    priority?: UpstreamPriority,
  ): Promise<Map<string, UpstreamListingDetail | null>> {
    if (!ids.length) return new Map();
    const data = await this.call<Record<string, UpstreamListingDetail | null>>((dropped) => detailsQuery(kind, ids, dropped), priority);
    return new Map(ids.map((id, i) => [id, data[`l${i}`] ?? null]));
  }

  async buildingsOfListings(
    kind: 'sale' | 'rental',
    ids: string[],
    priority?: UpstreamPriority,
  ): Promise<Map<string, UpstreamBuildingDetail | null>> {
    if (!ids.length) return new Map();
    const data = await this.call<Record<string, UpstreamBuildingDetail | null>>((dropped) => buildingsQuery(kind, ids, dropped), priority);
    return new Map(ids.map((id, i) => [id, data[`b${i}`] ?? null]));
  }
}

/** The fields a GraphQL validation error names: `Cannot query field "x" on type "Y".` */
export function rejectedFields(message: string): { field: string; type: string }[] {
  return [...message.matchAll(/Cannot query field "(\w+)" on type "(\w+)"/g)].map((m) => ({ field: m[1], type: m[2] }));
}
