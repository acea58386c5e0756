import type { Metrics } from '../metrics/metrics.js';

/** Why an upstream call failed: `timeout`, `blocked` (HTTP 403 bot block), `http` (other status),
 * `graphql` (an `errors` answer), `malformed` (a body that is not the expected JSON), `network`,
 * `circuit-open` (the breaker is refusing calls), `busy` (too many calls already wait their turn). */
export type UpstreamFailure = 'timeout' | 'blocked' | 'http' | 'graphql' | 'malformed' | 'network' | 'circuit-open' | 'busy';

/** An upstream call that did not give a usable answer. `transient` failures are worth a retry. */
export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }

  get transient(): boolean {
    return this.failure === 'timeout' || this.failure === 'network' || (this.failure === 'http' && (this.status ?? 0) >= 500);
  }
}

/**
 * Runs one request to an upstream and counts it in `nyc_listings_upstream_requests_total` by its outcome:
 * `ok`, or the failure's kind. Without metrics it only runs it.
 */
export async function countedRequest<T>(
  metrics: Metrics | undefined,
  upstream: 'listings' | 'open-data',
  send: () => Promise<T>,
): Promise<T> {
  try {
    const answer = await send();
    metrics?.upstreamRequests.inc({ upstream, outcome: 'ok' });
    return answer;
  } catch (error) {
    metrics?.upstreamRequests.inc({ upstream, outcome: error instanceof UpstreamError ? error.failure : 'error' });
    throw error;
  }
}
