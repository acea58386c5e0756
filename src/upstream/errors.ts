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
