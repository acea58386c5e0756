import { ExponentialBackoff, handleWhen, retry, type RetryPolicy } from 'cockatiel';
import { UpstreamError } from '../upstream/errors.js';

/** How a background job waits out a failed upstream request: attempts (the first included), first and longest wait (ms). */
export interface JobRetry {
  attempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

/** 5 attempts from 1 s to 30 s: together longer than the upstream breaker's half-open wait (30 s by default). */
export const DEFAULT_JOB_RETRY: JobRetry = { attempts: 5, initialDelayMs: 1000, maxDelayMs: 30_000 };

/**
 * The retry policy of a background job's upstream requests (a crawl's pages, a hydration's batches), on top of
 * the client's own quick retries: a transient failure (timeout, network, 5xx), an open breaker or a full queue
 * is waited out with jittered exponential backoff (cockatiel's decorrelated jitter) and asked again. Anything
 * else (a bot block, a refused query, a store error) is not retried here.
 */
export function jobRetry(options: JobRetry = DEFAULT_JOB_RETRY): RetryPolicy {
  return retry(
    handleWhen((e) => e instanceof UpstreamError && (e.transient || e.failure === 'circuit-open' || e.failure === 'busy')),
    {
      maxAttempts: options.attempts - 1,
      backoff: new ExponentialBackoff({ initialDelay: options.initialDelayMs, maxDelay: options.maxDelayMs }),
    },
  );
}
