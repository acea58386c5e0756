/**
 * Benchmark: the real service (embedded SQLite or PostgreSQL, local upstream) on loopback, driven by
 * autocannon, and for each scenario a bare `node:http` server answering the very same bytes, measured
 * in the same run: the ratio says how close the service comes to what this machine can serve at all.
 * Prints req/s, p50 and p99 per scenario, then the process's memory; writes the table and the command
 * to bench/results/. Usage: `npm run bench` (BENCH_SECONDS, BENCH_CONNECTIONS, DATABASE_URL to change
 * it). Traffic stays on 127.0.0.1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import { request } from 'undici';
import { loadConfig } from '../src/config.js';
import { issueKey } from '../src/keys/key-admin.js';
import { startRuntime } from '../src/runtime.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const dir = resolve('.cache', 'bench');
mkdirSync(dir, { recursive: true });

const config = loadConfig({
  ...process.env,
  DATABASE_URL: process.env.DATABASE_URL ?? join(dir, 'mirror.db'),
  MARKET_CLOCK: 'off',
  SYNC_INTERVAL_SECONDS: '0',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  RATE_LIMIT_BUSINESS_PER_MINUTE: '100000000',
  QUOTA_BUSINESS_PER_MONTH: '1000000000',
});
const started = Date.now();
// The service logs as it would in production (LOG_LEVEL, info by default), to /dev/null.
const runtime = await startRuntime(config, { logger: pino({ level: config.logLevel }, pino.destination('/dev/null')), scheduler: false, webhooks: false });
await runtime.coordinator.idle();
const listings = await runtime.listings.count();
console.log(`ready in ${Date.now() - started} ms (${listings} active listings, ${runtime.store.dialect})`);
const address = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
const key = await issueKey(runtime.keys, config, { plan: 'business', label: 'bench', expires: null });
const headers = { authorization: `Bearer ${key}` };

const scenarios: [string, string][] = [
  ['search rentals, page 1 of a borough', '/v1/search/rentals?areas=100'],
  ['search rentals, deep page (70)', '/v1/search/rentals?perPage=20&page=70'],
  ['search rentals, 5 filters, by price', '/v1/search/rentals?areas=200&minBeds=1&maxPrice=4000&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC'],
  ['search sales by price per sq ft', '/v1/search/sales?sort=PRICE_PER_SQFT&minSqft=500'],
  ['search sales, page of 500', '/v1/search/sales?perPage=500'],
  ['property by id', '/v1/property/1001001'],
  ['property by url', '/v1/property/by-url?url=/rental/1545'],
  ['areas', '/v1/areas'],
];

/** autocannon against `url` for the configured time; req/s, p50 and p99 in ms. */
async function load(url: string, withHeaders: Record<string, string>) {
  // The load runs in a worker thread so that it does not share the server's event loop.
  const result = await autocannon({ url, headers: withHeaders, connections, duration: seconds, workers: 1 });
  if (result.non2xx || result.errors) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99 };
}

const rows = [];
for (const [name, path] of scenarios) {
  // The bare server answers with the service's own answer: the same status, type and bytes.
  const answer = await request(`${address}${path}`, { headers });
  const body = Buffer.from(await answer.body.arrayBuffer());
  const type = String(answer.headers['content-type']);
  const bare = createServer((_req, res) => res.writeHead(200, { 'content-type': type, 'content-length': body.length }).end(body));
  await new Promise<void>((ready) => bare.listen(0, '127.0.0.1', ready));
  const service = await load(`${address}${path}`, headers);
  const limit = await load(`http://127.0.0.1:${(bare.address() as AddressInfo).port}${path}`, {});
  await new Promise((closed) => bare.close(closed));
  rows.push({
    scenario: name,
    bytes: body.length,
    'req/s': service.rps,
    'p50 ms': service.p50,
    'p99 ms': service.p99,
    'bare req/s': limit.rps,
    ratio: `${((service.rps / limit.rps) * 100).toFixed(1)} %`,
  });
}
const memory = process.memoryUsage();
console.table(rows);
const rss = Math.round(memory.rss / 1048576);
console.log(`rss ${rss} MiB, heap used ${Math.round(memory.heapUsed / 1048576)} MiB; ${connections} connections, ${seconds} s a run; ${listings} listings on ${runtime.store.dialect}`);
const command = `BENCH_SECONDS=${seconds} BENCH_CONNECTIONS=${connections}${process.env.DATABASE_URL ? ' DATABASE_URL=<...>' : ''} npm run bench`;
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
mkdirSync(resolve('bench', 'results'), { recursive: true });
writeFileSync(
  resolve('bench', 'results', `${stamp}-${runtime.store.dialect}-${listings}.json`),
  `${JSON.stringify({ command, at: new Date().toISOString(), dialect: runtime.store.dialect, listings, connections, seconds, rssMiB: rss, rows }, null, 2)}\n`,
);
await runtime.close();
