/**
 * The soak of `npm run bench:soak` (issue 66): the service under an app's traffic for SOAK_MINUTES (60), to see
 * whether memory or latency drift over an hour of requests, syncs and webhooks. Three processes, as in production:
 * the local upstream (faults on: 2 % of detail requests fail, 1 % stall 5 s; its market moved six hours every five
 * minutes), the service (`serve`, a sync every 5 minutes, metrics on), and this one: the load and a webhook receiver.
 *
 * - Load: app searches (bench/mixed-workload.ts) at a steady SOAK_RATE (200) a second, Poisson arrivals, plus a
 *   tenth as many listing lookups, of listings drawn from the mirror.
 * - Webhooks: one subscription to every listing change, to a receiver here that answers 503 to a tenth of attempts.
 * - Every minute: the service's RSS (at the minute's end, and its peak in the minute), V8 heap used, event-loop lag
 *   (p99 and most, from its metrics), the minute's p50 and p99 latency, answers by class, the webhook lag (from an
 *   event's time to its delivery) and the deliveries pending.
 *
 * The load starts once the first sync's details are hydrated, and the subscription is added then: the run measures the
 * steady state. At the end the load stops, the deliveries are waited for (as long as the retry schedule takes, 19.6
 * minutes), and the targets are judged after the first 5 minutes: RSS grows by at most 10 %, p99 stays within 1.5 times
 * its first value, no 5xx, every event delivered (the first two only when a sync wrote between minute 5 and the load's
 * end; else null). Writes bench/results/<time>-soak-<minutes>min.json and a chart beside it (.svg).
 *
 * Usage: `npm run bench:soak`. SOAK_MINUTES (60), SOAK_RATE (200), SOAK_SYNC_SECONDS (300: the syncs' and the market's
 * period), DATABASE_URL (a SQLite file under .cache/soak, synced afresh by the service's first start).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { seededRandom } from '../src/lib/seeded-random.js';
import { appSearches } from './mixed-workload.js';
import { freePort, npmStart, resetRssPeak, rssOf, spawnCommand, stop } from './processes.js';
import { type SoakSample, soakChart } from './soak-chart.js';

const minutes = Number(process.env.SOAK_MINUTES ?? 60);
const rate = Number(process.env.SOAK_RATE ?? 200);
/** Seconds between syncs, and between the market's moves (a shorter period reaches a market-moving sync sooner). */
const syncSeconds = Number(process.env.SOAK_SYNC_SECONDS ?? 300);
const dir = resolve('.cache', 'soak');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const databaseUrl = process.env.DATABASE_URL ?? join(dir, 'mirror.db');
const random = seededRandom(66);
/** The webhooks' retry schedule (seconds after each failed attempt): the end of the run waits for all of it. */
const RETRY_SCHEDULE = [0, 5, 30, 60, 120, 300, 600];

const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  LOG_LEVEL: 'info',
  DATABASE_URL: databaseUrl,
  LOCAL_STRIPE_STATE_FILE: '-',
  // The receiver is on loopback.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};
const [upstreamPort, adminPort, sodaPort, servicePort, metricsPort] = [
  await freePort(),
  await freePort(),
  await freePort(),
  await freePort(),
  await freePort(),
];
const upstream = await spawnCommand(
  ['upstream', '--port', String(upstreamPort), '--admin-port', String(adminPort), '--open-data-port', String(sodaPort)],
  { ...env, MARKET_CLOCK: 'on', LOCAL_UPSTREAM_FAULTS: 'errorRate=0.02,stallRate=0.01,stallMs=5000,on=details' },
  /local upstream on/,
);
// A run that fails leaves no process behind.
process.on('exit', () => upstream.child.kill('SIGKILL'));
const cli = async (args: string[]) => {
  const { execFile } = await import('node:child_process');
  return new Promise<string>((done, fail) =>
    execFile(process.execPath, ['dist/main.js', ...args], { env: { ...env, LOG_LEVEL: 'silent' } }, (error, stdout) =>
      error ? fail(error) : done(stdout.trim()),
    ),
  );
};
const key = await cli(['keys', 'issue', '--plan', 'business', '--label', 'soak']);
const keyId = (await cli(['keys', 'list'])).split('\n')[1].split('\t')[0];

// The webhook receiver: a tenth of attempts refused; each event's first delivery timed from the event's own time.
const delivered = new Map<string, number>();
const lags: number[] = [];
let refused = 0;
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    if (random() < 0.1) {
      refused++;
      return void res.writeHead(503).end();
    }
    const id = String(req.headers['webhook-id']);
    if (!delivered.has(id)) {
      const occurred = Date.parse((JSON.parse(body) as { timestamp: string }).timestamp);
      delivered.set(id, Date.now());
      lags.push((Date.now() - occurred) / 1000);
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', ready));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

// As `npm start` runs it: its environment (glibc's mmap threshold) and Node flags.
const asStarted = npmStart();
const service = await spawnCommand(
  ['serve', '--port', String(servicePort)],
  {
    ...asStarted.env,
    ...env,
    UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/`,
    OPEN_DATA_URL: `http://127.0.0.1:${sodaPort}`,
    UPSTREAM_PACING_SECONDS: '0',
    UPSTREAM_CONCURRENCY: '4',
    HYDRATION_BATCH: '100',
    SYNC_INTERVAL_SECONDS: String(syncSeconds),
    METRICS_PORT: String(metricsPort),
    WEBHOOK_RETRY_SCHEDULE_SECONDS: RETRY_SCHEDULE.join(','),
    RATE_LIMIT_BUSINESS_PER_MINUTE: '100000000',
    QUOTA_BUSINESS_PER_MONTH: '1000000000',
  },
  /nyc-listings listening/,
  asStarted.nodeFlags,
);
process.on('exit', () => service.child.kill('SIGKILL'));
const base = `http://127.0.0.1:${servicePort}`;
const pid = service.child.pid!;
// Steady state: the first sync's details hydrated before the load starts, and the subscription added after it (the
// first sync lists every listing: its events are not the market's changes).
let settled = 0;
for (;;) {
  // A search tells the index the store's version (it learns it when asked).
  await (await request(`${base}/v1/search/rentals?perPage=1`, { headers: { authorization: `Bearer ${key}` } })).body.dump();
  const health = (await (await request(`${base}/v1/health`)).body.json()) as {
    hydration?: { backlog: number; running: boolean; lastCompletedAt: string | null };
    searchIndex?: { building: boolean; dataVersion: number };
    valuation?: { enabled: boolean; running: boolean; runs: number };
  };
  // Hydrated, the price positions valued, and the search index built again at the store's version.
  const db = new Database(databaseUrl.replace(/^sqlite:/, ''), { readonly: true });
  const storeVersion = (db.prepare("select version from data_versions where name = 'listings'").get() as { version: number }).version;
  db.close();
  const indexed = !health.searchIndex?.building && health.searchIndex?.dataVersion === storeVersion;
  // A completed hydration run: at a first start the backlog is empty before anything is crawled, too.
  const hydrated = health.hydration?.backlog === 0 && !health.hydration.running && health.hydration.lastCompletedAt !== null;
  // The work after the first hydration run (market figures, placing recorded sales, then the valuation) has ended once
  // a valuation run has: it starts only after the sales are placed, seconds after the hydration run ends.
  const valued = !health.valuation?.enabled || (health.valuation.runs > 0 && !health.valuation.running);
  // Three polls in a row: the index is built again after the valuation's write.
  settled = hydrated && valued && indexed ? settled + 1 : 0;
  if (settled >= 3) break;
  await new Promise((r) => setTimeout(r, 2000));
}
await cli(['webhooks', 'add', '--key', keyId, '--url', hook, '--events', 'listing.listed,listing.price_changed,listing.status_changed']);
const mirror = new Database(databaseUrl.replace(/^sqlite:/, ''), { readonly: true });
const rows = mirror.prepare("select id, kind, area_id, borough_id, price, bedroom_count from listings where status = 'ACTIVE'").all() as {
  id: string;
  kind: string;
  area_id: number | null;
  borough_id: number | null;
  price: number;
  bedroom_count: number | null;
}[];
const searches = appSearches(rows, 50_000, 66);
const startEvent = (mirror.prepare('select coalesce(max(id), 0) as n from change_events').get() as { n: number }).n;
mirror.close();

/** One minute's requests: latencies (ms), answers by class, and the answers slower than a second (asked and answered, epoch ms). */
interface Minute {
  latencies: number[];
  statuses: Record<string, number>;
  slow: { asked: number; answered: number }[];
}
const perMinute: Minute[] = [];
const current = () => perMinute.at(-1)!;
perMinute.push({ latencies: [], statuses: {}, slow: [] });
const ask = (path: string) => {
  const moment = performance.now();
  const bucket = current();
  request(base + path, { headers: { authorization: `Bearer ${key}` } }).then(
    async (answer) => {
      await answer.body.dump();
      const ms = performance.now() - moment;
      bucket.latencies.push(ms);
      if (ms >= 1000) bucket.slow.push({ asked: Date.now() - ms, answered: Date.now() });
      const kind = `${Math.floor(answer.statusCode / 100)}xx`;
      bucket.statuses[kind] = (bucket.statuses[kind] ?? 0) + 1;
    },
    (error: Error & { code?: string }) => {
      bucket.statuses.failed = (bucket.statuses.failed ?? 0) + 1;
      // What failed (a refused or reset connection, a timeout), by its code: `failed` alone does not tell.
      const cause = `failed ${error.code ?? error.name}`;
      bucket.statuses[cause] = (bucket.statuses[cause] ?? 0) + 1;
    },
  );
};

/**
 * The service's metrics, read once: `name` (with its labels as a scrape writes them, `name{a="b"}`, when it has
 * any) -> the value of its first line. Once a minute, because each read
 * resets prom-client's event-loop delay histogram: a second read right after the first would see an empty one.
 */
async function metrics(): Promise<(name: string) => number | null> {
  const lines = (await (await request(`http://127.0.0.1:${metricsPort}/metrics`)).body.text()).split('\n');
  return (name) => {
    const line = lines.find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ')[1]) : null;
  };
}
const rank = (sorted: number[], q: number) =>
  Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;

/** What each minute recorded. */
const samples: SoakSample[] = [];

/** The minutes' records under way. */
const recording: Promise<void>[] = [];

/** `bytes` in whole MiB, null for none. */
const mebibytes = (bytes: number | null) => (bytes === null ? null : Math.round(bytes / 1048576));

/** Records minute `minute`'s sample: its requests, the webhook lags of the minute, the RSS read at its end and its peak, the service's metrics. */
async function recordMinute(minute: number, done: Minute, minuteLags: number[], rss: { now: number; peak: number | null }): Promise<void> {
  const latencies = [...done.latencies].sort((a, b) => a - b);
  const metric = await metrics();
  const sample = {
    minute,
    rssMiB: rss.now,
    rssPeakMiB: rss.peak,
    heapUsedMiB: Math.round((metric('nodejs_heap_size_used_bytes') ?? 0) / 1048576),
    heapTotalMiB: mebibytes(metric('nyc_listings_thread_heap_bytes{thread="main",state="total"}')),
    backgroundHeapUsedMiB: mebibytes(metric('nyc_listings_thread_heap_bytes{thread="background",state="used"}')),
    backgroundHeapTotalMiB: mebibytes(metric('nyc_listings_thread_heap_bytes{thread="background",state="total"}')),
    eventLoopLagP99Ms: Math.round((metric('nodejs_eventloop_lag_p99_seconds') ?? 0) * 10000) / 10,
    // The API thread's longest wait in the minute: a stall of the answers that is the event loop's shows here.
    eventLoopLagMaxMs: Math.round((metric('nodejs_eventloop_lag_max_seconds') ?? 0) * 10000) / 10,
    p50Ms: rank(latencies, 0.5),
    p99Ms: rank(latencies, 0.99),
    requests: latencies.length,
    statuses: done.statuses,
    webhookLagP99Seconds: rank(minuteLags, 0.99),
    webhooksPending: metric('nyc_listings_webhook_queue_depth') ?? 0,
    slow: done.slow.length
      ? {
          count: done.slow.length,
          from: new Date(Math.min(...done.slow.map((r) => r.asked))).toISOString(),
          to: new Date(Math.max(...done.slow.map((r) => r.answered))).toISOString(),
        }
      : null,
  };
  samples.push(sample);
  console.log(JSON.stringify(sample));
}

/** What `read` reads from the mirror, on a read-only connection of its own, closed after. */
function fromMirror<T>(read: (db: Database.Database) => T): T {
  const db = new Database(databaseUrl.replace(/^sqlite:/, ''), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}
/** The mirror's listing events after event `after`, up to event `upTo` when given (the change log's ids rise). */
const listingEvents = (after: number, upTo = Number.MAX_SAFE_INTEGER) =>
  fromMirror(
    (db) =>
      (
        db.prepare("select count(*) as n from change_events where id > ? and id <= ? and type like 'listing.%'").get(after, upTo) as {
          n: number;
        }
      ).n,
  );
/** The change log's last id now. */
const lastEventId = () => fromMirror((db) => (db.prepare('select coalesce(max(id), 0) as n from change_events').get() as { n: number }).n);
/** The change log's last id when minute 5 ended: a run whose syncs wrote nothing after it, under load, judges no target. */
let lastEventOfMinute5: number | null = null;

/** The RSS now and its peak since the last reading, the peak reset for the next (null when it cannot be). */
const peakResettable = resetRssPeak(pid);
const rssOfMinute = () => {
  const { now, peak } = rssOf(pid);
  resetRssPeak(pid);
  return { now, peak: peakResettable ? peak : null };
};
console.log(`soak: ${minutes} min, ${rate} searches/s and ${rate / 10} lookups/s, a sync every ${syncSeconds} s, webhooks refused 1 in 10`);
const started = performance.now();
let at = started;
let nextMinute = started + 60_000;
let nextMarket = started + syncSeconds * 1000;
const end = started + minutes * 60_000;
let lagsSeen = 0;
while (at < end) {
  at += (-Math.log(1 - random()) / (rate * 1.1)) * 1000;
  const wait = at - performance.now();
  if (wait > 0) await new Promise((woken) => setTimeout(woken, wait));
  ask(random() < 1 / 11 ? `/v1/property/${rows[Math.floor(random() * rows.length)].id}` : searches[Math.floor(random() * searches.length)]);
  if (performance.now() >= nextMarket) {
    nextMarket += syncSeconds * 1000;
    void request(`http://127.0.0.1:${adminPort}/market/advance?hours=6`, { method: 'POST' }).then((r) => r.body.dump());
  }
  if (performance.now() >= nextMinute) {
    nextMinute += 60_000;
    const done = current();
    perMinute.push({ latencies: [], statuses: {}, slow: [] });
    const minuteLags = lags.slice(lagsSeen).sort((a, b) => a - b);
    lagsSeen = lags.length;
    // Recorded beside the load, not in its way: awaited here, the scrape held the arrivals back, which then went out at
    // once and queued behind each other in the next minute.
    recording.push(recordMinute(recording.length + 1, done, minuteLags, rssOfMinute()));
    if (recording.length === 5) lastEventOfMinute5 = lastEventId();
  }
}
// Events the drain's syncs write after the load are not the measured minutes'.
const lastEventOfLoad = lastEventId();
// The last minute ends with the load, before its boundary is met in the loop.
if (recording.length < minutes)
  recording.push(
    recordMinute(
      recording.length + 1,
      current(),
      lags.slice(lagsSeen).sort((a, b) => a - b),
      rssOfMinute(),
    ),
  );
await Promise.all(recording);
samples.sort((a, b) => a.minute - b.minute);

// Every event since the start delivered (each its own webhook-id): waited for as long as the whole retry schedule takes,
// and a minute more (the 60-minute run of 2026-11-29 ended on a delivery refused five times, waiting for its sixth).
const events = async () => listingEvents(startEvent);
const deadline = Date.now() + (RETRY_SCHEDULE.reduce((a, b) => a + b, 0) + 60) * 1000;
while (delivered.size < (await events()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1000));
const eventCount = await events();

const after = samples.filter((s) => s.minute > 5);
const first = after[0];
const serverErrors = samples.reduce((n, s) => n + (s.statuses['5xx'] ?? 0) + (s.statuses.failed ?? 0), 0);
const targets = {
  rssGrowthPercent: first ? Math.round((Math.max(...after.map((s) => s.rssMiB)) / first.rssMiB - 1) * 1000) / 10 : null,
  // Beside the target, which reads the RSS once a minute: the highest of the minutes' peaks (a sync's, among them) over minute 6's RSS.
  rssPeakGrowthPercent:
    first && after.every((s) => s.rssPeakMiB !== null)
      ? Math.round((Math.max(...after.map((s) => s.rssPeakMiB ?? 0)) / first.rssMiB - 1) * 1000) / 10
      : null,
  p99Ratio: first ? Math.round((Math.max(...after.map((s) => s.p99Ms)) / Math.max(first.p99Ms, 0.1)) * 100) / 100 : null,
  serverErrors,
  events: eventCount,
  delivered: delivered.size,
  refusedAttempts: refused,
};
// The targets are about syncs that write: without one between minute 5 and the load's end (a sync before the market's
// first move, a run of five minutes or less), memory and latency are not judged (null), not met.
const judged = lastEventOfMinute5 !== null && listingEvents(lastEventOfMinute5, lastEventOfLoad) > 0;
const met = {
  rss: judged ? targets.rssGrowthPercent !== null && targets.rssGrowthPercent <= 10 : null,
  p99: judged ? targets.p99Ratio !== null && targets.p99Ratio <= 1.5 : null,
  noServerErrors: serverErrors === 0,
  everyWebhookDelivered: delivered.size >= eventCount,
};
console.log(`targets after the first 5 minutes: ${JSON.stringify(targets)} -> ${JSON.stringify(met)}`);

await stop(service.child);
await stop(upstream.child);
receiver.close();
const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-soak-${minutes}min`;
const threads = process.env.BACKGROUND_THREAD === 'false' ? 'BACKGROUND_THREAD=false ' : '';
const command = `${threads}SOAK_MINUTES=${minutes} SOAK_RATE=${rate}${syncSeconds === 300 ? '' : ` SOAK_SYNC_SECONDS=${syncSeconds}`} npm run bench:soak`;
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  join('bench/results', `${name}.json`),
  `${JSON.stringify({ command, at: new Date().toISOString(), minutes, rate, targets, met, samples }, null, 2)}\n`,
);
writeFileSync(join('bench/results', `${name}.svg`), soakChart(samples, `${command}: ${minutes} minutes`));
console.log(`written: bench/results/${name}.json and .svg`);
process.exit(0);
