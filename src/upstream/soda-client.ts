import {
  BrokenCircuitError,
  CircuitState as BreakerState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  retry,
  wrap,
  type IPolicy,
} from 'cockatiel';
import type { Logger } from 'pino';
import { request } from 'undici';
import type { SodaRow } from '../domain/city-records.js';
import type { CircuitState } from './client.js';
import { countedRequest, UpstreamError } from './errors.js';
import type { Metrics } from '../metrics/metrics.js';

/** Dataset ids of NYC Open Data the service reads (docs/open-data.md); the local emulator serves the same ids. */
export const DATASETS = { recordedSales: 'usep-8jbt', taxLots: '64uk-42ks' } as const;

export interface SodaClientOptions {
  /** Base URL of the SODA site (`https://data.cityofnewyork.us`, or the local emulator). */
  url: string;
  /** Sent as `X-App-Token` when set (requests are then attributed to the application, not throttled per address). */
  appToken?: string | null;
  timeoutSeconds: number;
  /** Attempts for a transient failure (timeout, network, 5xx, 429), including the first. */
  maxAttempts?: number;
  breakerThreshold?: number;
  breakerHalfOpenSeconds?: number;
  logger?: Logger;
  /** Where each request is counted by outcome. */
  metrics?: Metrics;
}

/** A SoQL query of the resource endpoint; `$limit` and `$offset` are the client's. */
export interface SodaQuery {
  select?: string;
  where?: string;
  /** Required for paging: SODA's rows have no order of their own. */
  order: string;
}

/**
 * Client of NYC Open Data's SODA 2.x resource endpoint over undici (docs/open-data.md):
 * `GET {url}/resource/<dataset>.json?$select=&$where=&$order=&$limit=&$offset=`, a timeout per request,
 * retries with exponential backoff for transient failures (timeouts, network errors, 5xx, 429), and a
 * circuit breaker over consecutive failures, separate from the listings site's. Every method raises
 * {@link UpstreamError}.
 */
export class SodaClient {
  private readonly policy: IPolicy;
  private readonly breaker;
  private readonly halfOpenAfterMs: number;
  private openedAt = 0;

  constructor(private readonly options: SodaClientOptions) {
    this.halfOpenAfterMs = (options.breakerHalfOpenSeconds ?? 30) * 1000;
    this.breaker = circuitBreaker(
      handleWhen((e) => e instanceof UpstreamError && e.failure !== 'http'),
      {
        halfOpenAfter: this.halfOpenAfterMs,
        breaker: new ConsecutiveBreaker(options.breakerThreshold ?? 5),
      },
    );
    this.breaker.onBreak(() => {
      this.openedAt = Date.now();
      options.logger?.warn(
        { retryInSeconds: this.halfOpenAfterMs / 1000 },
        'open data circuit opened: no calls to SODA until it half-opens',
      );
    });
    this.breaker.onReset(() => options.logger?.info('open data circuit closed: SODA answers again'));
    const retryPolicy = retry(
      handleWhen((e) => e instanceof UpstreamError && (e.transient || e.status === 429)),
      {
        maxAttempts: Math.max(0, (options.maxAttempts ?? 3) - 1),
        backoff: new ExponentialBackoff({ initialDelay: 200, maxDelay: 2000 }),
      },
    );
    this.policy = wrap(retryPolicy, this.breaker);
  }

  /** `open` only while the breaker refuses calls: once its wait is over it reports `half-open`. */
  circuitState(): CircuitState {
    if (this.breaker.state === BreakerState.Open) return Date.now() - this.openedAt >= this.halfOpenAfterMs ? 'half-open' : 'open';
    return this.breaker.state === BreakerState.HalfOpen ? 'half-open' : 'closed';
  }

  /** One page of rows: `limit` rows from `offset` under the query's order. */
  async page(dataset: string, query: SodaQuery, limit: number, offset: number): Promise<SodaRow[]> {
    const params = new URLSearchParams();
    if (query.select) params.set('$select', query.select);
    if (query.where) params.set('$where', query.where);
    params.set('$order', query.order);
    params.set('$limit', String(limit));
    params.set('$offset', String(offset));
    try {
      return await this.policy.execute(() =>
        countedRequest(this.options.metrics, 'open-data', () => this.once(`${this.options.url}/resource/${dataset}.json?${params}`)),
      );
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw new UpstreamError('circuit-open', 'open data circuit breaker is open');
      throw error;
    }
  }

  /**
   * Every row of the query, page by page (`pageSize` rows, `$offset` on under the query's stable order),
   * each page handed to `onPage` before the next is asked for; stops at a page shorter than asked.
   * Returns the number of rows read.
   */
  async each(dataset: string, query: SodaQuery, pageSize: number, onPage: (rows: SodaRow[]) => Promise<void>): Promise<number> {
    let read = 0;
    for (;;) {
      const rows = await this.page(dataset, query, pageSize, read);
      if (rows.length) await onPage(rows);
      read += rows.length;
      if (rows.length < pageSize) return read;
    }
  }

  private async once(url: string): Promise<SodaRow[]> {
    const timeoutMs = this.options.timeoutSeconds * 1000;
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(url, {
        headers: { accept: 'application/json', ...(this.options.appToken ? { 'x-app-token': this.options.appToken } : {}) },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const e = error as Error & { code?: string };
      const timeout = e.name === 'TimeoutError' || e.name === 'AbortError' || /Timeout/.test(e.code ?? '');
      throw new UpstreamError(timeout ? 'timeout' : 'network', `SODA ${timeout ? 'timed out' : 'unreachable'}: ${e.message}`);
    }
    const text = await response.body.text().catch(() => '');
    if (response.statusCode !== 200) {
      let message = text.slice(0, 200);
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message;
      } catch {
        /* not JSON: keep the text */
      }
      // 429 (throttled) is worth a retry like a 5xx; other 4xx are the query's fault and are not.
      const failure = response.statusCode >= 500 || response.statusCode === 429 ? 'network' : 'http';
      throw new UpstreamError(failure, `SODA answered ${response.statusCode}: ${message}`, response.statusCode);
    }
    let rows: unknown;
    try {
      rows = JSON.parse(text);
    } catch {
      throw new UpstreamError('malformed', 'SODA answered a body that is not JSON');
    }
    if (!Array.isArray(rows)) throw new UpstreamError('malformed', 'SODA answered something other than an array of rows');
    return rows as SodaRow[];
  }
}
