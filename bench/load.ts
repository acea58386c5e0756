/** The loads a bench scenario is measured under: closed (autocannon's connections) or open (Poisson arrivals). */
import autocannon from 'autocannon';
import { request } from 'undici';
import { seededRandom } from '../src/lib/seeded-random.js';

/** How long a round lasts and how many connections a closed load keeps busy. */
export interface LoadShape {
  seconds: number;
  connections: number;
}

/** A load's figures: req/s, p50 and p99 in ms, failed requests, and all answered. */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  failed: number;
  total: number;
}

/**
 * autocannon against `base + path` for the shape's time and connections, or an open load at `rate` a second; req/s, p50 and p99 in ms, and the requests
 * that failed (a timeout is 10 s). Failures of the baseline end the run; the service's and the
 * peer's are counted and shown (`tolerateErrors`).
 */
export async function load(
  shape: LoadShape,
  base: string,
  path: string,
  withHeaders: Record<string, string>,
  vary?: () => string,
  tolerateErrors = false,
  rate?: number,
): Promise<LoadResult> {
  const { seconds, connections } = shape;
  if (rate) return steadyLoad(seconds, base, path, withHeaders, rate, vary, tolerateErrors);
  // A varying request's hook cannot cross into a worker thread, so that load runs on this thread (the
  // service and the peer have processes of their own; the baselines here are idle then).
  const requests: autocannon.Request[] | undefined = vary
    ? [{ setupRequest: (req) => ({ ...req, path: path.replace('{varies}', vary()) }) }]
    : undefined;
  const result = await autocannon({
    url: base + path.replace('{varies}', vary?.() ?? ''),
    headers: withHeaders,
    connections,
    duration: seconds,
    requests,
    ...(vary ? {} : { workers: 1 }),
  });
  if ((result.non2xx || result.errors) && !tolerateErrors)
    throw new Error(`${base}${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors,
    total: result.requests.total,
  };
}

/**
 * An open load for `seconds`: requests sent at the moments of a Poisson process of `rate` a
 * second, each whether or not the earlier ones were answered, as independent users would; a request's
 * latency runs from its moment to the end of its answer, so a slow answer delays no later measurement.
 * (autocannon's `overallRate` paces each connection on its own timer: its 50 connections sent in bursts
 * of 50, and the baseline's p99 at 100 a second was 30 ms.) Same figures as {@link load}.
 */
async function steadyLoad(
  seconds: number,
  base: string,
  path: string,
  withHeaders: Record<string, string>,
  rate: number,
  vary?: () => string,
  tolerateErrors = false,
) {
  const random = seededRandom(rate);
  const latencies: number[] = [];
  let failed = 0;
  const sent: Promise<void>[] = [];
  const start = performance.now();
  let at = start;
  for (;;) {
    at += (-Math.log(1 - random()) / rate) * 1000;
    if (at - start >= seconds * 1000) break;
    const wait = at - performance.now();
    if (wait > 0) await new Promise((woken) => setTimeout(woken, wait));
    const moment = at;
    sent.push(
      request(base + path.replace('{varies}', vary?.() ?? ''), { headers: withHeaders }).then(
        async (answer) => {
          await answer.body.dump();
          if (answer.statusCode !== 200) failed++;
          latencies.push(performance.now() - moment);
        },
        () => void failed++,
      ),
    );
  }
  await Promise.all(sent);
  if (failed && !tolerateErrors) throw new Error(`${base}${path}: ${failed} failed`);
  latencies.sort((a, b) => a - b);
  const rank = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return { rps: Math.round(latencies.length / seconds), p50: rank(0.5), p99: rank(0.99), failed, total: latencies.length };
}
