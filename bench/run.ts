/**
 * Benchmark: the real service (embedded SQLite, local upstream) on loopback, driven by autocannon.
 * Prints requests per second and latency percentiles per scenario, then the process's memory.
 * Usage: `npm run bench` (BENCH_SECONDS, BENCH_CONNECTIONS to change the load). Traffic stays on 127.0.0.1.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { issueKey } from '../src/keys/key-admin.js';
import { startRuntime } from '../src/runtime.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const dir = resolve('.cache', 'bench');
mkdirSync(dir, { recursive: true });

const config = loadConfig({
  ...process.env,
  DATABASE_URL: process.env.DATABASE_URL ?? join(dir, 'mirror.db'),
  MARKET_CLOCK: 'off',
  SYNC_INTERVAL_SECONDS: '0',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_BUSINESS_PER_MINUTE: '100000000',
  QUOTA_BUSINESS_PER_MONTH: '100000000',
});
const started = Date.now();
const runtime = await startRuntime(config, { logger: pino({ level: 'warn' }), scheduler: false });
console.log(`ready in ${Date.now() - started} ms (${await runtime.listings.count()} active listings)`);
const address = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
const key = await issueKey(runtime.keys, config, { plan: 'business', label: 'bench', expires: null });
const headers = { authorization: `Bearer ${key}` };

const scenarios: [string, string][] = [
  ['search rentals, 1 filter, page of 50', '/v1/search/rentals?areas=100'],
  ['search rentals, 5 filters, by price', '/v1/search/rentals?areas=200&minBeds=1&maxPrice=4000&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC'],
  ['search sales, page of 500', '/v1/search/sales?perPage=500'],
  ['search sales, monthly cost + prewar, deep page', '/v1/search/sales?maxMonthlyCost=8000&prewar=true&page=20'],
  ['search sales by price per sq ft', '/v1/search/sales?sort=PRICE_PER_SQFT&minSqft=500'],
  ['property by id', '/v1/property/1001001'],
  ['property by url', '/v1/property/by-url?url=/rental/1545'],
  ['areas', '/v1/areas'],
];

const rows = [];
for (const [name, path] of scenarios) {
  // The load runs in a worker thread so that it does not share the server's event loop.
  const result = await autocannon({ url: `${address}${path}`, headers, connections, duration: seconds, workers: 1 });
  rows.push({
    scenario: name,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  });
}
const memory = process.memoryUsage();
console.table(rows);
console.log(`rss ${Math.round(memory.rss / 1048576)} MiB, heap used ${Math.round(memory.heapUsed / 1048576)} MiB; ${connections} connections, ${seconds} s each`);
mkdirSync(resolve('bench', 'results'), { recursive: true });
writeFileSync(resolve('bench', 'results', `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify({ rows, memory, connections, seconds }, null, 2));
await runtime.close();
