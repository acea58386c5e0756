import { setTimeout as sleep } from 'node:timers/promises';
import {
  BrokenCircuitError,
  bulkhead,
  ConsecutiveBreaker,
  ExponentialBackoff,
  circuitBreaker,
  handleWhen,
  retry,
  wrap,
  CircuitState,
  type IPolicy,
} from 'cockatiel';
import { request } from 'undici';
import { UpstreamError } from './errors.js';
import { AREAS_QUERY, BUILDING_QUERY, buildingOfListingQuery, listingQuery, searchQuery } from './queries.js';
import type { UpstreamArea, UpstreamBuilding, UpstreamListingNode, UpstreamSearchInput, UpstreamSearchResult } from './types.js';

/** What the service asks of an upstream listings site. Every method raises {@link UpstreamError}. */
export interface UpstreamClient {
  areas(): Promise<UpstreamArea[]>;
  search(kind: 'sale' | 'rental', input: UpstreamSearchInput): Promise<UpstreamSearchResult>;
  /** Listing detail, or null when the site has no such listing. */
  listing(kind: 'sale' | 'rental', id: string): Promise<UpstreamListingNode | null>;
  buildingOfListing(kind: 'sale' | 'rental', id: string): Promise<UpstreamBuilding | null>;
  building(idOrSlug: string): Promise<UpstreamBuilding | null>;
  /** `closed`, `open` or `half-open`: the state of the circuit breaker. */
  circuitState(): string;
}

export interface GraphqlClientOptions {
  url: string;
  timeoutSeconds: number;
  extendedFields: boolean;
  /** Attempts for a transient failure (timeout, network, 5xx), including the first. */
  maxAttempts?: number;
  /** Requests in flight at once, and the least seconds between the starts of two requests. */
  concurrency?: number;
  pacingSeconds?: number;
  /** Consecutive failures that open the breaker, and seconds before it lets one call through. */
  breakerThreshold?: number;
  breakerHalfOpenSeconds?: number;
}

/**
 * GraphQL client over undici for the upstream site (or the local upstream, which speaks the same
 * protocol): `POST {url}` with `{query, variables}`, a timeout per attempt, retries with jittered
 * exponential backoff for transient failures, a circuit breaker over consecutive failures, and pacing:
 * at most `concurrency` requests at once, their starts at least `pacingSeconds` apart.
 */
export class GraphqlUpstreamClient implements UpstreamClient {
  private readonly policy: IPolicy;
  private readonly breaker;
  private nextStart = 0;

  constructor(private readonly options: GraphqlClientOptions) {
    const retryPolicy = retry(
      handleWhen((e) => e instanceof UpstreamError && e.transient),
      { maxAttempts: Math.max(0, (options.maxAttempts ?? 3) - 1), backoff: new ExponentialBackoff({ initialDelay: 200, maxDelay: 2000 }) },
    );
    this.breaker = circuitBreaker(
      handleWhen((e) => e instanceof UpstreamError && e.failure !== 'graphql'),
      { halfOpenAfter: (options.breakerHalfOpenSeconds ?? 30) * 1000, breaker: new ConsecutiveBreaker(options.breakerThreshold ?? 5) },
    );
    this.policy = wrap(retryPolicy, this.breaker, bulkhead(options.concurrency ?? 1, Number.MAX_SAFE_INTEGER));
  }

  /** Waits for this request's start slot: starts are spaced `pacingSeconds` apart. */
  private async pace(): Promise<void> {
    const gap = (this.options.pacingSeconds ?? 0) * 1000;
    if (gap <= 0) return;
    const now = Date.now();
    const start = Math.max(now, this.nextStart);
    this.nextStart = start + gap;
    if (start > now) await sleep(start - now);
  }

  circuitState(): string {
    return this.breaker.state === CircuitState.Open ? 'open' : this.breaker.state === CircuitState.HalfOpen ? 'half-open' : 'closed';
  }

  private async call<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    try {
      return await this.policy.execute(() => this.once<T>(query, variables));
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw new UpstreamError('circuit-open', 'upstream circuit breaker is open');
      throw error;
    }
  }

  private async once<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    await this.pace();
    const timeoutMs = this.options.timeoutSeconds * 1000;
    let response;
    try {
      response = await request(this.options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
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
    if (response.statusCode >= 400) throw new UpstreamError('http', `upstream answered HTTP ${response.statusCode}`, response.statusCode);
    let body: { data?: T | null; errors?: { message: string }[] };
    try {
      body = JSON.parse(text);
    } catch {
      throw new UpstreamError('malformed', 'upstream answered a body that is not JSON');
    }
    if (body.errors?.length) throw new UpstreamError('graphql', `upstream GraphQL errors: ${body.errors.map((e) => e.message).join('; ')}`);
    if (!body.data || typeof body.data !== 'object') throw new UpstreamError('malformed', 'upstream answer has no data');
    return body.data;
  }

  async areas(): Promise<UpstreamArea[]> {
    const data = await this.call<{ areas: UpstreamArea[] }>(AREAS_QUERY, {});
    if (!Array.isArray(data.areas)) throw new UpstreamError('malformed', 'areas answer is not a list');
    return data.areas;
  }

  async search(kind: 'sale' | 'rental', input: UpstreamSearchInput): Promise<UpstreamSearchResult> {
    const status = kind === 'sale' ? { saleStatus: 'ACTIVE' } : { rentalStatus: 'ACTIVE' };
    const variables = { input: { ...input, filters: { ...input.filters, ...status }, adStrategy: 'NONE' } };
    const data = await this.call<Record<string, UpstreamSearchResult>>(searchQuery(kind, this.options.extendedFields), variables);
    const result = data[kind === 'sale' ? 'searchSales' : 'searchRentals'];
    if (!result || !Array.isArray(result.edges) || typeof result.totalCount !== 'number') {
      throw new UpstreamError('malformed', 'search answer lacks edges or totalCount');
    }
    return result;
  }

  async listing(kind: 'sale' | 'rental', id: string): Promise<UpstreamListingNode | null> {
    const data = await this.call<{ listing: UpstreamListingNode | null }>(listingQuery(kind, this.options.extendedFields), { id });
    return data.listing ?? null;
  }

  async buildingOfListing(kind: 'sale' | 'rental', id: string): Promise<UpstreamBuilding | null> {
    const data = await this.call<{ building: UpstreamBuilding | null }>(buildingOfListingQuery(kind), { id });
    return data.building ?? null;
  }

  async building(idOrSlug: string): Promise<UpstreamBuilding | null> {
    const data = await this.call<{ building: UpstreamBuilding | null }>(BUILDING_QUERY, { idOrSlug });
    return data.building ?? null;
  }
}
