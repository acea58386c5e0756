/**
 * Benchmark: the real service (embedded SQLite or PostgreSQL, local upstream) on loopback, driven by
 * autocannon, and for each scenario a bare `node:http` server answering the very same bytes, measured
 * in the same run: the ratio says how close the service comes to what this machine can serve at all.
 * Prints req/s, p50 and p99 per scenario, then the service process's resident memory; writes the
 * table and the command to bench/results/. Usage: `npm run bench` (BENCH_SECONDS, BENCH_CONNECTIONS, DATABASE_URL to change
 * it). Traffic stays on 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

// The service runs in a process of its own (as `nyc-listings serve` would), so that its memory is
// measured alone and the load generator does not share its event loop. Freshness thresholds are a
// year: the benchmark measures reads, not a sync started by a stale scope in the middle of it.
const databaseUrl = process.env.DATABASE_URL ?? join(dir, 'mirror.db');
const serviceEnv: Record<string, string> = {
  ...(process.env as Record<string, string>),
  DATABASE_URL: databaseUrl,
  MARKET_CLOCK: 'off',
  SYNC_INTERVAL_SECONDS: '0',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  RATE_LIMIT_BUSINESS_PER_MINUTE: '100000000',
  QUOTA_BUSINESS_PER_MONTH: '1000000000',
  ...Object.fromEntries(['SEARCH', 'PROPERTY', 'BUILDING', 'AREAS'].map((r) => [`FRESHNESS_${r}_SECONDS`, '31536000'])),
};
const config = loadConfig(serviceEnv);
// The first run on an empty database syncs it here, before anything is timed.
const setup = await startRuntime(config, { logger: pino({ level: 'warn' }), scheduler: false, webhooks: false });
await setup.coordinator.idle();
const key = await issueKey(setup.keys, config, { plan: 'business', label: 'bench', expires: null });
const listings = await setup.listings.count();
const dialect = setup.store.dialect;
await setup.close();
const started = Date.now();
const service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--port', String(await freePort()), '--host', '127.0.0.1'], {
  env: serviceEnv,
  stdio: ['ignore', 'ignore', 'pipe'],
});
const address = await new Promise<string>((resolve, reject) => {
  let log = '';
  service.stderr.on('data', (chunk: Buffer) => {
    log += chunk.toString();
    const match = /nyc-listings listening on (http:\/\/[0-9.:]+)/.exec(log);
    if (match) resolve(match[1]);
  });
  service.once('exit', (code) => reject(new Error(`the service exited (${code}): ${log.slice(-2000)}`)));
});
console.log(`service ready in ${Date.now() - started} ms (${listings} active listings, ${dialect})`);
const headers = { authorization: `Bearer ${key}` };

/** Resident memory of the service process, MiB (Linux). */
function serviceRss(): number {
  const status = readFileSync(`/proc/${service.pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024);
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((ready) => probe.listen(0, '127.0.0.1', ready));
  const { port } = probe.address() as AddressInfo;
  await new Promise((closed) => probe.close(closed));
  return port;
}

/** The URL of page `n` reached by following `links.next` (keyset cursors) from `first`. */
async function byCursor(first: string, n: number): Promise<string> {
  let url = first;
  for (let page = 1; page < n; page++) {
    const answer = await request(`${address}${url}`, { headers });
    url = ((await answer.body.json()) as { meta: { links: { next: string } } }).meta.links.next;
  }
  return url;
}

const scenarios: [string, string][] = [
  ['search rentals, page 1 of a borough', '/v1/search/rentals?areas=100'],
  ['search rentals, deep page (150 of 20)', '/v1/search/rentals?perPage=20&page=150'],
  ['search rentals, the same page by cursor', await byCursor('/v1/search/rentals?perPage=20', 150)],
  ['search rentals, 5 filters, by price', '/v1/search/rentals?areas=200&minBeds=1&maxPrice=4000&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC'],
  // A different maximum price on every request: no answer is reused, every one is counted and read.
  ['search rentals, uncached (a new maxPrice each time)', '/v1/search/rentals?areas=200&minBeds=1&maxPrice=VARIES&sort=PRICE&sortDir=ASC'],
  ['search sales by price per sq ft', '/v1/search/sales?sort=PRICE_PER_SQFT&minSqft=500'],
  ['search sales, page of 500', '/v1/search/sales?perPage=500'],
  ['property by id', '/v1/property/1001001'],
  ['property by url', '/v1/property/by-url?url=/rental/1545'],
  ['areas', '/v1/areas'],
];

/** autocannon against `url` for the configured time; req/s, p50 and p99 in ms. */
async function load(url: string, withHeaders: Record<string, string>) {
  // Each request of a varying scenario asks a maximum price of its own ($2,000 to $1,002,000). Its
  // request hook cannot cross into a worker thread, so that load runs on this thread (the service has a
  // process of its own; the bare servers here are idle then). Other loads run in a worker thread.
  const varies = url.includes('VARIES');
  const requests: autocannon.Request[] | undefined = varies
    ? [{ setupRequest: (req) => ({ ...req, path: req.path!.replace(/maxPrice=[0-9A-Z]+/, `maxPrice=${2000 + Math.floor(Math.random() * 1_000_000)}`) }) }]
    : undefined;
  const result = await autocannon({ url: varies ? url.replace('VARIES', '3000') : url, headers: withHeaders, connections, duration: seconds, requests, ...(varies ? {} : { workers: 1 }) });
  if (result.non2xx || result.errors) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99 };
}

const rows = [];
for (const [name, path] of scenarios) {
  // The bare server answers with the service's own answer: the same status, type and bytes.
  const answer = await request(`${address}${path.replace('VARIES', '3000')}`, { headers });
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
const rss = serviceRss();
console.table(rows);
console.log(`service rss ${rss} MiB; ${connections} connections, ${seconds} s a run; ${listings} listings on ${dialect}`);
const command = `BENCH_SECONDS=${seconds} BENCH_CONNECTIONS=${connections}${process.env.DATABASE_URL ? ` DATABASE_URL=${dialect === 'postgres' ? '<postgres>' : process.env.DATABASE_URL}` : ''} npm run bench`;
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
mkdirSync(resolve('bench', 'results'), { recursive: true });
writeFileSync(
  resolve('bench', 'results', `${stamp}-${dialect}-${listings}.json`),
  `${JSON.stringify({ command, at: new Date().toISOString(), dialect, listings, connections, seconds, serviceRssMiB: rss, rows }, null, 2)}\n`,
);
service.kill('SIGTERM');
await new Promise((exited) => service.once('exit', exited));
