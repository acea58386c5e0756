import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { Metrics } from '../../src/metrics/metrics.js';
import { ROOT } from '../helpers/paths.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// GET /metrics on METRICS_PORT, scraped over HTTP as Prometheus would, checked against what the test did.
let rt: TestRuntime;
let key: string;

beforeAll(async () => {
  // A long read-cache time: the answer cache's hits and misses below do not depend on the machine's speed.
  rt = await startTestRuntime({ METRICS_PORT: '0', READ_CACHE_SECONDS: '600' }, { withoutRentHop: true });
  key = await rt.key('pro');
});
afterAll(async () => rt.close());

/** Scrapes the metrics port: every sample as `name{labels}` -> value. */
async function scrape(): Promise<Map<string, number>> {
  const answer = await request(rt.metricsServer!.url);
  expect(answer.statusCode).toBe(200);
  expect(answer.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await answer.body.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const sample = (samples: Map<string, number>, name: string) => samples.get(name) ?? 0;

describe('metrics', () => {
  it('count requests by matched route and status, answer-cache hits and misses, apart from the public port', async () => {
    const before = await scrape();
    const search = '/v1/search/rentals?areas=300&minBeds=1&sort=PRICE&perPage=7';
    for (let i = 0; i < 3; i++) expect((await get(rt.app, search)).status).toBe(200);
    expect((await get(rt.app, '/v1/property/999999999', key)).status).toBe(404);
    expect((await get(rt.app, '/v1/search/rentals?minBeds=lots')).status).toBe(400);
    expect((await get(rt.app, '/no/such/path')).status).toBe(404);
    // Never on the public port.
    expect((await get(rt.app, '/metrics')).status).toBe(404);
    const after = await scrape();
    const delta = (name: string) => sample(after, name) - sample(before, name);
    expect(delta('nyc_listings_http_requests_total{route="/v1/search/rentals",method="GET",status="200"}')).toBe(3);
    expect(delta('nyc_listings_http_requests_total{route="/v1/search/rentals",method="GET",status="400"}')).toBe(1);
    // By the route's pattern, never the id in the path.
    expect(delta('nyc_listings_http_requests_total{route="/v1/property/:id",method="GET",status="404"}')).toBe(1);
    expect(delta('nyc_listings_http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(2);
    expect([...after.keys()].some((k) => k.includes('999999999'))).toBe(false);
    expect(delta('nyc_listings_http_request_duration_seconds_count{route="/v1/search/rentals",method="GET",status="200"}')).toBe(3);
    // The answer cache keeps an answer the second time it is asked: miss, miss (kept), hit; the listing looked up
    // (a route that uses the cache too) a miss.
    expect(delta('nyc_listings_answer_cache_requests_total{outcome="miss"}')).toBe(3);
    expect(delta('nyc_listings_answer_cache_requests_total{outcome="hit"}')).toBe(1);
  });

  it('count upstream requests and time syncs by scope, and read the backlog, parked listings, queues and circuits', async () => {
    const before = await scrape();
    const asked = rt.upstream!.requestCount();
    await rt.syncer.syncScope('rental', 500);
    const sent = rt.upstream!.requestCount() - asked;
    expect(sent).toBeGreaterThan(0);
    const after = await scrape();
    const delta = (name: string) => sample(after, name) - sample(before, name);
    expect(delta('nyc_listings_upstream_requests_total{upstream="listings",outcome="ok"}')).toBe(sent);
    expect(delta('nyc_listings_sync_duration_seconds_count{scope="rental:500",outcome="success"}')).toBe(1);
    expect(sample(after, 'nyc_listings_upstream_circuit_state{upstream="listings"}')).toBe(0);
    expect(sample(after, 'nyc_listings_hydration_backlog')).toBe(await rt.syncer.backlog());
    expect(sample(after, 'nyc_listings_hydration_parked')).toBe(await rt.syncer.parked());
    const queue = await rt.webhooks.queue(new Date().toISOString());
    expect(sample(after, 'nyc_listings_webhook_queue_depth')).toBe(queue.pending);
    expect(sample(after, 'nyc_listings_webhook_dead_letters')).toBe(queue.dead);
    expect(after.has('nyc_listings_change_stream_clients')).toBe(true);
    // Process metrics, the event loop's lag among them.
    expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('answer nothing but GET /metrics on their port, and are off without METRICS_PORT', async () => {
    const other = await request(rt.metricsServer!.url.replace(/\/metrics$/, '/'));
    expect(other.statusCode).toBe(404);
    await other.body.dump();
    const off = await startTestRuntime({}, { withoutRentHop: true });
    try {
      expect(off.metricsServer).toBeNull();
    } finally {
      await off.close();
    }
  });
});

describe('the list of metrics in docs/operations.md', () => {
  it("names every metric the service registers, and none it does not (the process's own, prom-client's, aside)", async () => {
    const table = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `nyc_listings_'));
    const documented = table.flatMap((line) => [...line.split('|')[1].matchAll(/`(nyc_listings_\w+)`/g)].map((m) => m[1])).sort();
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.observe({});
    const registered = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(registered.every((name) => name.startsWith('nyc_listings_'))).toBe(true);
    expect(documented).toEqual(registered);
  });
});
