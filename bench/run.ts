/**
 * Benchmark: the real service (embedded SQLite or PostgreSQL) on loopback, driven by autocannon, and for
 * each scenario in the same run (this machine is noisy, so only ratios within one run mean anything):
 *   - a `node:http` baseline answering the very same bytes, the limit of this machine: in a process of its own, as a
 *     client sees it, and inside the bench's process, as it was measured before issue 67;
 *   - a generic database-to-REST peer, @platformatic/db, over the same rows with the nearest query it
 *     can express (SQLite runs only; see bench/peer.ts).
 * Prints req/s, p50 and p99 per scenario and each req/s as a ratio of the baseline's; then the
 * service's resident memory, the sync rate (a full sync of an empty mirror from the local upstream)
 * and, with BENCH_LISTINGS, the seed rate; then webhook deliveries a second while a sync runs, and the first
 * retries' delay (bench/webhooks.ts). Writes it all and the command to bench/results/, in place of the
 * previous run of the same database and number of listings.
 *
 * Processes: the local upstream runs alone (as the real site would be elsewhere), the service alone
 * (its RSS is its own), the load generator here; the peer starts once the service has been measured and
 * stopped. Traffic stays on 127.0.0.1.
 *
 * Each scenario runs in BENCH_ROUNDS rounds (3): the service, then the baseline in a process of its own, then the
 * baseline in this process (bench/baseline.ts), so that all are measured seconds apart under the same load from the rest
 * of the machine: a scenario's req/s is the median of its rounds, its ratio the median of the rounds' ratios (each
 * service round against the baseline's round right after it; the separate baseline's ratio is the one targets are
 * stated in), p50 the median of the rounds' p50, p99 the worst round's. The peer runs as many rounds.
 *
 * Usage: `npm run bench`. BENCH_SECONDS (5, a round), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50), DATABASE_URL (a SQLite file under
 * .cache/bench by default, or postgres://...), BENCH_LISTINGS (seed the mirror to this many listings
 * first), BENCH_PEER=off (skip the peer), BENCH_SYNC=off (skip the sync rate), BENCH_WEBHOOKS=off (skip the webhook
 * scenario, which BENCH_ONLY also runs only when it matches `webhooks`), BENCH_ONLY (a regular expression
 * of scenario names), BENCH_PROFILE (a folder: the service writes a V8 CPU profile of its run there, `--cpu-prof`),
 * BENCH_NODE_FLAGS (Node flags for the service's process, e.g. `--max-old-space-size=192`), BENCH_SERVICE_LOG (a file
 * the service's log is written to).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { request } from 'undici';
import { loadConfig } from '../src/config.js';
import { MOST_ROOMS } from '../src/http/routes/estimate.js';
import { issueKey } from '../src/keys/key-admin.js';
import { startRuntime } from '../src/runtime.js';
import { openStore } from '../src/store/database.js';
import { ListingsRepository } from '../src/store/listings-repository.js';
import { seedListings } from '../src/sync/seed.js';
import { inProcessBaseline, separateBaseline } from './baseline.js';
import { startPeer, type Peer } from './peer.js';
import { appSearches, drawWithRepeats, MIXED_RATE, MIXED_SEARCHES, mixedSearches } from './mixed-workload.js';
import { cpuMicrosOf, freePort, npmStart, rssOf, spawnCommand, stop } from './processes.js';
import { load } from './load.js';
import { freshMirror, webhookRate } from './webhooks.js';
import { startWriter, type Writer } from './writer.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const shape = { seconds, connections };
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
const dir = resolve('.cache', 'bench');
mkdirSync(dir, { recursive: true });
const databaseUrl = process.env.DATABASE_URL ?? join(dir, 'mirror.db');
const postgres = /^postgres(ql)?:/.test(databaseUrl);

// The local upstream in a process of its own, its market still: the benchmark measures reads.
const baseEnv: Record<string, string> = {
  ...(process.env as Record<string, string>),
  MARKET_CLOCK: 'off',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};
const upstreamPort = await freePort();
const upstream = await spawnCommand(
  ['upstream', '--port', String(upstreamPort), '--open-data-port', String(await freePort())],
  baseEnv,
  /local upstream on/,
);
const upstreamUrl = `http://127.0.0.1:${upstreamPort}/`;

// Freshness thresholds are a year: no sync starts in the middle of a measurement.
const serviceEnv: Record<string, string> = {
  ...baseEnv,
  UPSTREAM_URL: upstreamUrl,
  // An UPSTREAM_URL gets the real site's polite defaults (1 s pacing, one call at a time); this one is the
  // local upstream, so it gets what the embedded default uses for it.
  UPSTREAM_PACING_SECONDS: '0',
  UPSTREAM_CONCURRENCY: '4',
  HYDRATION_BATCH: '100',
  DATABASE_URL: databaseUrl,
  SYNC_INTERVAL_SECONDS: '0',
  RATE_LIMIT_BUSINESS_PER_MINUTE: '100000000',
  QUOTA_BUSINESS_PER_MONTH: '1000000000',
  ...Object.fromEntries(['SEARCH', 'PROPERTY', 'BUILDING', 'AREAS'].map((r) => [`FRESHNESS_${r}_SECONDS`, '31536000'])),
};
const config = loadConfig(serviceEnv);
const quiet = pino({ level: 'warn' });

/**
 * Sync rate: a full sync (areas, every scope, every listing's details) of an empty mirror of the same
 * kind from the local upstream, in listings a second. A fresh SQLite file, or a fresh PostgreSQL schema.
 */
async function syncRate(): Promise<{ listings: number; seconds: number; perSecond: number }> {
  const mirror = await freshMirror(databaseUrl, dir, 'sync-rate');
  const runtime = await startRuntime(
    { ...config, databaseUrl: mirror.url },
    { logger: quiet, initialSync: false, scheduler: false, webhooks: false },
  );
  const started = performance.now();
  const failed = await runtime.syncer.syncAll();
  const elapsed = (performance.now() - started) / 1000;
  if (failed.length) throw new Error(`the sync-rate sync failed: ${failed.join(', ')}`);
  const listings = await runtime.listings.count();
  await runtime.close();
  await mirror.drop();
  return { listings, seconds: Math.round(elapsed * 10) / 10, perSecond: Math.round(listings / elapsed) };
}
const sync = process.env.BENCH_SYNC === 'off' ? null : await syncRate();
if (sync) console.log(`sync: ${sync.listings} listings in ${sync.seconds} s, ${sync.perSecond} listings/s (areas, 10 scopes, details)`);

// The mirror measured: synced on first use, then seeded to BENCH_LISTINGS when asked.
const setup = await startRuntime(config, { logger: quiet, scheduler: false, webhooks: false });
await setup.coordinator.idle();
const key = await issueKey(setup.keys, config, { plan: 'business', label: 'bench', expires: null });
const dialect = setup.store.dialect;
await setup.close();
let seed: Awaited<ReturnType<typeof seedListings>> | null = null;
if (process.env.BENCH_LISTINGS) {
  const store = await openStore(databaseUrl);
  seed = await seedListings(store, Number(process.env.BENCH_LISTINGS), 2016);
  await store.close();
  console.log(`seed: ${seed.added} synthetic listings in ${seed.seconds} s, ${seed.perSecond} listings/s`);
}
const store = await openStore(databaseUrl);
// Planner statistics and the visibility map as a running PostgreSQL would have them (autovacuum vacuums and
// analyzes a table some time after a bulk write; a mirror synced or seeded a moment ago has neither, and
// without the visibility map a count cannot be read from an index alone). After the seed: vacuumed before
// it, a run at a million listings read the heap for every count (the size slider: p99 2.5 s, not 0.2).
// SQLite gathers its own statistics on open.
if (store.dialect === 'postgres') await sql`vacuum analyze`.execute(store.db);
const listings = await new ListingsRepository(store.db).count();
/** Every active listing's id, to ask for one at random each request (few are asked twice in a run at a million). */
const allIds = (await store.db.selectFrom('listings').select('id').where('status', '=', 'ACTIVE').execute()).map((r) => r.id);
/** Active listings with a position: properties not listed are drawn near them (issue 49's estimates of properties not listed). */
const positioned = await store.db
  .selectFrom('listings')
  .select(['kind', 'latitude', 'longitude', 'bedroom_count'])
  .where('status', '=', 'ACTIVE')
  .where('latitude', 'is not', null)
  .execute();
/**
 * A property not listed: in a building with a listing of its kind (at its position: a point drawn off it may fall in the
 * water, a 422), with the listing's bedrooms or one more, at most what the route takes (a few listings have more: a 400).
 */
function propertyNotListed(): string {
  const at = positioned[Math.floor(Math.random() * positioned.length)];
  const bedrooms = Math.min(MOST_ROOMS, (at.bedroom_count ?? 1) + Math.floor(Math.random() * 2));
  return `kind=${at.kind}&near=${at.latitude},${at.longitude}&bedrooms=${bedrooms}`;
}
const drawnFrom = await store.db
  .selectFrom('listings')
  .select(['kind', 'area_id', 'borough_id', 'price', 'bedroom_count'])
  .where('status', '=', 'ACTIVE')
  .execute();
const mixed = mixedSearches(drawnFrom, MIXED_SEARCHES, 2016);
const apps = appSearches(drawnFrom, MIXED_SEARCHES, 2016);
await store.close();

const started = Date.now();
const { env: startEnv, nodeFlags: startFlags } = npmStart();
for (const [name, value] of Object.entries(startEnv)) serviceEnv[name] ??= value;
const nodeFlags = [
  ...startFlags,
  ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
  ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []),
];
const service = await spawnCommand(
  ['serve', '--port', String(await freePort()), '--host', '127.0.0.1'],
  serviceEnv,
  /nyc-listings listening on (http:\/\/[0-9.:]+)/,
  nodeFlags,
);
const address = service.match[1];
console.log(`service ready in ${Date.now() - started} ms (${listings} active listings, ${dialect})`);
// The service answers from the store while its search index is built in the background (issue 67): the measurement
// starts once the index is built, as a service that has run a while has it.
for (;;) {
  const health = (await (await request(`${address}/v1/health`)).body.json()) as { searchIndex: { enabled: boolean; builds: number } };
  if (!health.searchIndex.enabled || health.searchIndex.builds > 0) break;
  await new Promise((r) => setTimeout(r, 200));
}
console.log(`search index built ${Date.now() - started} ms after the start`);
const headers = { authorization: `Bearer ${key}` };

/** The URL of the page reached by following `links.next` (keyset cursors) from `first`, `n - 1` times or to the last page. */
async function byCursor(first: string, n = Infinity): Promise<string> {
  let url = first;
  for (let page = 1; page < n; page++) {
    const answer = await request(`${address}${url}`, { headers });
    const next = ((await answer.body.json()) as { meta: { links: { next: string | null } } }).meta.links.next;
    if (!next) break;
    url = next;
  }
  return url;
}

/**
 * A scenario: the service's path (`{varies}` in it is replaced on each request by `vary()`, so that
 * no answer is reused), and the peer's nearest request for the same rows (none when it has no match).
 */
interface Scenario {
  name: string;
  /** Or a function that finds it once the scenario is selected (a path reached by following pages). */
  path: string | (() => Promise<string>);
  vary?: () => string;
  peer?: string;
  /** A line of the scenario's own, printed and stored with its row. */
  note?: () => string;
  /**
   * Requests a second at random moments ({@link steadyLoad}), for the latency at a steady load below
   * saturation; without it each of the connections sends its next request as soon as its answer comes. A paced
   * scenario has no ratio to the baseline (both answer the same rate): the baseline's p99 is shown instead.
   */
  rate?: number;
  /** Another instance's writes while it runs (bench/writer.ts): so many listings' prices changed, a write every so many ms. */
  writes?: { listings: number; everyMs: number };
}
const mixedDraws = drawWithRepeats(mixed, config.readCacheSeconds);
const R = '/listings?where.kind.eq=rental&where.status.eq=ACTIVE';
const S = '/listings?where.kind.eq=sale&where.status.eq=ACTIVE';
const scenarios: Scenario[] = [
  {
    name: 'search rentals, page 1 of a borough',
    path: '/v1/search/rentals?areas=100',
    peer: `${R}&where.boroughId.eq=100&orderby.recommendedScore=desc&orderby.listedAt=desc&orderby.id=desc&limit=50&totalCount=true`,
  },
  {
    name: 'search rentals, deep page (150 of 20)',
    path: '/v1/search/rentals?perPage=20&page=150',
    peer: `${R}&orderby.recommendedScore=desc&orderby.listedAt=desc&orderby.id=desc&limit=20&offset=2980&totalCount=true`,
  },
  { name: 'search rentals, the same page by cursor', path: () => byCursor('/v1/search/rentals?perPage=20', 150) },
  // Reached page by page: some minutes at a million listings, so only when the scenario is asked for.
  { name: 'search rentals, last page of a borough by cursor', path: () => byCursor('/v1/search/rentals?areas=100') },
  {
    name: 'search rentals, 5 filters, by price',
    path: '/v1/search/rentals?areas=200&minBeds=1&maxPrice=4000&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC',
    // The peer cannot join amenities: four of the five filters.
    peer: `${R}&where.boroughId.eq=200&where.bedroomCount.gte=1&where.price.lte=4000&where.noFee.eq=1&orderby.price=asc&orderby.id=asc&limit=50&totalCount=true`,
  },
  {
    name: 'search rentals, uncached (a new maxPrice each time)',
    path: '/v1/search/rentals?areas=200&minBeds=1&maxPrice={varies}&sort=PRICE&sortDir=ASC',
    vary: () => String(2000 + Math.floor(Math.random() * 1_000_000)),
    peer: `${R}&where.boroughId.eq=200&where.bedroomCount.gte=1&where.price.lte={varies}&orderby.price=asc&orderby.id=asc&limit=50&totalCount=true`,
  },
  {
    // Paging and sorting one search the price ladders cannot count (an amenity): every page needs its total.
    name: 'search rentals with a doorman, a new page, size or order each time',
    path: '/v1/search/rentals?amenities=DOORMAN&{varies}',
    vary: () => {
      const sort = ['RECOMMENDED', 'PRICE', 'LISTED_AT', 'PRICE_PER_SQFT'][Math.floor(Math.random() * 4)];
      const page = 1 + Math.floor(Math.random() * 5);
      return `sort=${sort}&sortDir=${Math.random() < 0.5 ? 'ASC' : 'DESC'}&page=${page}&perPage=${10 + Math.floor(Math.random() * 41)}`;
    },
  },
  {
    name: 'search sales by price per sq ft',
    path: '/v1/search/sales?sort=PRICE_PER_SQFT&minSqft=500',
    peer: `${S}&where.sqft.gte=500&orderby.pricePerSqft=desc&orderby.id=desc&limit=50&totalCount=true`,
  },
  {
    // A size slider: the pair of filter and order whose columns are tied (migration 015).
    name: 'search sales by price per sq ft, uncached (a new maxSqft each time)',
    path: '/v1/search/sales?sort=PRICE_PER_SQFT&minSqft=500&maxSqft={varies}',
    vary: () => String(5_000 + Math.floor(Math.random() * 995_000)),
    peer: `${S}&where.sqft.gte=500&where.sqft.lte={varies}&orderby.pricePerSqft=desc&orderby.id=desc&limit=50&totalCount=true`,
  },
  {
    name: 'search sales, page of 500',
    path: '/v1/search/sales?perPage=500',
    peer: `${S}&orderby.recommendedScore=desc&orderby.listedAt=desc&orderby.id=desc&limit=500&totalCount=true`,
  },
  { name: 'property by id', path: '/v1/property/8000000', peer: '/listings/8000000' },
  {
    name: 'property by id, any listing at random',
    path: '/v1/property/{varies}',
    vary: () => allIds[Math.floor(Math.random() * allIds.length)],
    peer: '/listings/{varies}',
  },
  // Issue 49: an estimate of a listing not cached, at least 500 a second at 58,466 listings; p99 at most 50 ms at 100 a
  // second at a million.
  {
    name: 'estimate of a listing at random',
    path: '/v1/property/{varies}/estimate',
    vary: () => allIds[Math.floor(Math.random() * allIds.length)],
  },
  {
    name: 'estimate of a listing at random, at 100 a second',
    path: '/v1/property/{varies}/estimate',
    vary: () => allIds[Math.floor(Math.random() * allIds.length)],
    rate: 100,
  },
  { name: 'estimate of a property not listed, a new one each time', path: '/v1/estimate?{varies}', vary: propertyNotListed },
  { name: 'property by url', path: '/v1/property/by-url?url=/rental/1545', peer: '/listings?where.urlPath.eq=%2Frental%2F1545' },
  { name: 'areas', path: '/v1/areas', peer: '/areas?limit=500&orderby.id=asc&totalCount=true' },
  {
    name: `mixed searches (${MIXED_SEARCHES.toLocaleString('en')} distinct, drawn from the mirror)`,
    path: '{varies}',
    vary: mixedDraws.draw,
    note: () =>
      `${pct(mixedDraws.counts.repeated, mixedDraws.counts.asked)} of ${mixedDraws.counts.asked} requests repeated a search within READ_CACHE_SECONDS (the most the answer cache could answer)`,
  },
  {
    // The same searches at a steady rate: the latency a user sees on a busy service, not queueing at saturation.
    name: `mixed searches at ${MIXED_RATE} a second`,
    path: '{varies}',
    vary: mixedDraws.draw,
    rate: MIXED_RATE,
  },
];

/**
 * A map's view of the city as the explorer asks for its clusters: a random centre over the five boroughs, a zoom of
 * 11 to 15 and the box a 1280 x 800 pixel map shows at it, the rentals' filters of a person on about half.
 */
function mapView(): string {
  const zoom = 11 + Math.floor(Math.random() * 5);
  const width = (1280 / 256) * (360 / 2 ** zoom);
  const height = (800 / 256) * (360 / 2 ** zoom) * Math.cos((40.7 * Math.PI) / 180);
  const [lon, lat] = [-74.05 + Math.random() * 0.3, 40.58 + Math.random() * 0.3];
  const box = [lon - width / 2, lat - height / 2, lon + width / 2, lat + height / 2].map((v) => v.toFixed(5)).join(',');
  const filters =
    Math.random() < 0.5 ? `&maxPrice=${2000 + 250 * Math.floor(Math.random() * 20)}&minBeds=${Math.floor(Math.random() * 3)}` : '';
  return `bbox=${box}&zoom=${zoom}${filters}`;
}
const appDraws = drawWithRepeats(apps, config.readCacheSeconds);
scenarios.push(
  {
    name: `app searches (${MIXED_SEARCHES.toLocaleString('en')} distinct: amenities on half, every sort, pages 1-5 of 20-50)`,
    path: '{varies}',
    vary: appDraws.draw,
    note: () =>
      `${pct(appDraws.counts.repeated, appDraws.counts.asked)} of ${appDraws.counts.asked} requests repeated a search within READ_CACHE_SECONDS`,
  },
  // Issue 47's steady rates: p99 at most 20 ms at 500 a second on the whole city, at most 50 ms at 200 a second at a million;
  // issue 67's: at most 20 ms at 1,000 a second on the whole city.
  ...[MIXED_RATE, 200, 500, 1000].map((rate) => ({
    name: `app searches at ${rate} a second`,
    path: '{varies}',
    vary: appDraws.draw,
    rate,
  })),
  // A sync's writes as another instance makes them: the search index adds the listings written as a delta (their row
  // versions), where before each write had it built again while the store answered.
  {
    name: 'app searches at 200 a second while another instance writes 20 listings a second',
    path: '{varies}',
    vary: appDraws.draw,
    rate: 200,
    writes: { listings: 20, everyMs: 1000 },
  },
  { name: 'map clusters of rentals, a new view each time', path: '/v1/search/rentals/clusters?{varies}', vary: mapView },
  {
    name: 'map clusters of rentals, a new view each time, at 50 a second',
    path: '/v1/search/rentals/clusters?{varies}',
    vary: mapView,
    rate: 50,
  },
);

const pct = (part: number, whole: number) => `${((part / whole) * 100).toFixed(1)} %`;
/** The middle value (the mean of the two middle ones for an even count). */
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
/** A scenario's rounds as one figure: the median req/s and p50, the worst p99, every failure. */
const combineRounds = (results: Awaited<ReturnType<typeof load>>[]) => ({
  rps: median(results.map((r) => r.rps)),
  p50: median(results.map((r) => r.p50)),
  p99: Math.max(...results.map((r) => r.p99)),
  failed: results.reduce((sum, r) => sum + r.failed, 0),
});
const selected = scenarios.filter((scenario) => !only || only.test(scenario.name));
const rows: Record<string, string | number | null>[] = [];
for (const scenario of selected) {
  const path = typeof scenario.path === 'string' ? scenario.path : await scenario.path();
  const example = path.replace('{varies}', scenario.vary?.() ?? '');
  // The baseline answers with the service's own answer: the same status, type and bytes.
  const answer = await request(`${address}${example}`, { headers });
  const body = Buffer.from(await answer.body.arrayBuffer());
  if (answer.statusCode !== 200) throw new Error(`${example}: ${answer.statusCode} ${body}`);
  const type = String(answer.headers['content-type']);
  const baseline = await separateBaseline(type, body);
  const inProcess = await inProcessBaseline(type, body);
  const measuredRounds: Awaited<ReturnType<typeof load>>[] = [];
  const baselineRounds: Awaited<ReturnType<typeof load>>[] = [];
  const inProcessRounds: Awaited<ReturnType<typeof load>>[] = [];
  let cpuMicros = 0;
  const writer: Writer | null = scenario.writes
    ? await startWriter(databaseUrl, allIds, scenario.writes.listings, scenario.writes.everyMs)
    : null;
  for (let round = 0; round < rounds; round++) {
    const cpuBefore = cpuMicrosOf(service.child.pid!);
    measuredRounds.push(await load(shape, address, path, headers, scenario.vary, true, scenario.rate));
    cpuMicros += cpuMicrosOf(service.child.pid!) - cpuBefore;
    // The same client as the service's round: a varying path keeps autocannon on this thread (bench/load.ts), so the
    // baselines are asked by it too, for the ratio to compare servers rather than load generators.
    const sameClient = scenario.vary ? () => '' : undefined;
    baselineRounds.push(await load(shape, baseline.url, example, {}, sameClient, false, scenario.rate));
    inProcessRounds.push(await load(shape, inProcess.url, example, {}, sameClient, false, scenario.rate));
  }
  const written = await writer?.stop();
  await Promise.all([baseline.close(), inProcess.close()]);
  const served = measuredRounds.reduce((sum, r) => sum + r.total, 0);
  // The service's CPU per answer: steadier than req/s on a busy machine, since it does not count waiting.
  const cpuPerRequest = Math.round(cpuMicros / Math.max(1, served));
  const measured = combineRounds(measuredRounds);
  const limit = combineRounds(baselineRounds);
  const limitInProcess = combineRounds(inProcessRounds);
  /** Each service round against the baseline's round right after it. */
  const ratiosTo = (limits: typeof baselineRounds) => (scenario.rate ? [] : limits.map((r, i) => measuredRounds[i].rps / r.rps));
  const ratios = ratiosTo(baselineRounds);
  const row = {
    scenario: scenario.name,
    bytes: body.length,
    'req/s': measured.rps,
    'p50 ms': measured.p50,
    'p99 ms': measured.p99,
    failed: measured.failed,
    'CPU us/req': cpuPerRequest,
    'baseline req/s': limit.rps,
    ratio: scenario.rate ? `paced at ${scenario.rate} req/s; baseline p99 ${limit.p99} ms` : pct(median(ratios), 1),
    'ratio by round': ratios.map((r) => pct(r, 1)).join(', '),
    'in-process baseline req/s': limitInProcess.rps,
    'ratio in-process': scenario.rate ? `baseline p99 ${limitInProcess.p99} ms` : pct(median(ratiosTo(inProcessRounds)), 1),
    'peer req/s': null as number | null,
    'peer p99': null as number | null,
    'peer failed': null as number | null,
    'vs peer': null as string | null,
    note: written
      ? `${written.writes} writes of ${scenario.writes!.listings} listings by another instance while it ran`
      : (scenario.note?.() ?? null),
  };
  rows.push(row);
  console.log(
    `${row.scenario}: ${row['req/s']} req/s (p50 ${row['p50 ms']} ms, p99 ${row['p99 ms']} ms, ${row.failed} failed, ${row['CPU us/req']} us CPU each), ${scenario.rate ? row.ratio : `${row.ratio} of the separate baseline (rounds: ${row['ratio by round']}), ${row['ratio in-process']} of the in-process one`}${row.note ? `; ${row.note}` : ''}`,
  );
}
const { now: serviceRssMiB, peak: servicePeakRssMiB } = rssOf(service.child.pid!);
await stop(service.child);

// The peer is measured after the service has stopped, one scenario after another once it answers again:
// it may go on working through requests the load generator gave up on, and must not compete with the service.
const peer: Peer | null =
  postgres || process.env.BENCH_PEER === 'off' ? null : await startPeer(databaseUrl.replace(/^sqlite:/, ''), await freePort());
let peerRssMiB: number | null = null;
if (peer) {
  /** Whether the peer answers a trivial request within 3 minutes (it may still be busy with abandoned ones). */
  const peerIdle = () =>
    request(`${peer.url}/areas?limit=1`, { headersTimeout: 180_000, bodyTimeout: 180_000 }).then(
      async (r) => {
        await r.body.dump();
        return true;
      },
      () => false,
    );
  let peerGone = false;
  for (const [i, scenario] of selected.entries()) {
    if (!scenario.peer || peerGone) continue;
    const peerRounds: Awaited<ReturnType<typeof load>>[] = [];
    for (let round = 0; round < rounds && !peerGone; round++) {
      // Each round starts once the peer is idle again, as the service's rounds start on an idle service.
      peerGone = !(await peerIdle());
      if (!peerGone) peerRounds.push(await load(shape, peer.url, scenario.peer, {}, scenario.vary, true));
    }
    if (peerGone) console.log('the peer did not answer within 3 minutes: its remaining scenarios are not measured');
    if (!peerRounds.length) continue;
    const other = combineRounds(peerRounds);
    Object.assign(rows[i], {
      'peer req/s': other.rps,
      'peer p99': other.p99,
      'peer failed': other.failed,
      'vs peer': other.rps > 0 ? `${((rows[i]['req/s'] as number) / other.rps).toFixed(1)}x` : 'peer answered none',
    });
    console.log(`peer, ${scenario.name}: ${other.rps} req/s (p99 ${other.p99} ms, ${other.failed} failed)`);
  }
  peerRssMiB = rssOf(peer.pid).now;
  await peer.stop();
}

// Webhook delivery while a sync runs in the same process (issue 45), on a mirror of its own.
const webhooks = process.env.BENCH_WEBHOOKS === 'off' || (only && !only.test('webhooks')) ? null : await webhookRate(config, dir, quiet);
if (webhooks) {
  console.log(
    `webhooks: ${webhooks.events} events to two receivers; ${webhooks.deliveriesPerSecondDuringSync} deliveries/s to the fast one while a ${webhooks.syncSeconds} s sync ran ` +
      `(${webhooks.deliveriesPerSecond}/s first to last); first retries late by p50 ${webhooks.firstRetryDelay.p50} s, p99 ${webhooks.firstRetryDelay.p99} s, ` +
      `at most ${webhooks.firstRetryDelay.max} s; another subscription's ${webhooks.otherSubscriptionRetryDelay.retries} retries late by ` +
      `p99 ${webhooks.otherSubscriptionRetryDelay.p99} s, at most ${webhooks.otherSubscriptionRetryDelay.max} s; ${webhooks.duplicates} duplicates`,
  );
}

console.table(rows);
console.log(
  `service rss ${serviceRssMiB} MiB at the end, ${servicePeakRssMiB} MiB at most${peer ? `, peer rss ${peerRssMiB} MiB` : ''}; ${connections} connections, ${rounds} rounds of ${seconds} s a scenario; ${listings} active listings on ${dialect}; ` +
    `sync ${sync ? `${sync.perSecond} listings/s` : 'not measured'}${seed ? `, seed ${seed.perSecond} listings/s` : ''}`,
);
const env = [
  'BENCH_SECONDS',
  'BENCH_ROUNDS',
  'BENCH_CONNECTIONS',
  'BENCH_LISTINGS',
  'BENCH_PEER',
  'BENCH_ONLY',
  'BENCH_SYNC',
  'BENCH_WEBHOOKS',
  'BENCH_NODE_FLAGS',
]
  .filter((n) => process.env[n])
  .map((n) => `${n}=${process.env[n]}`);
if (process.env.DATABASE_URL) env.push(`DATABASE_URL=${postgres ? '<postgres>' : process.env.DATABASE_URL}`);
const command = [...env, 'npm run bench'].join(' ');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const resultsDir = resolve('bench', 'results');
mkdirSync(resultsDir, { recursive: true });
// The folder keeps the latest run of each configuration (database, listings, and whether only some scenarios
// ran: BENCH_ONLY); earlier runs live in git's history.
const configuration = `${dialect}-${listings}${only ? '-partial' : ''}`;
for (const earlier of readdirSync(resultsDir).filter((name) => name.endsWith(`Z-${configuration}.json`))) rmSync(join(resultsDir, earlier));
writeFileSync(
  resolve(resultsDir, `${stamp}-${configuration}.json`),
  `${JSON.stringify({ command, at: new Date().toISOString(), dialect, listings, connections, seconds, rounds, serviceRssMiB, servicePeakRssMiB, peerRssMiB, sync, seed, webhooks, rows }, null, 2)}\n`,
);
await stop(upstream.child);
