/**
 * The webhook scenario of `npm run bench` (issue 45): deliveries a second to fast local receivers while a sync
 * runs in the same process, and how late the first retries come after they fall due. A fresh mirror (SQLite
 * file or PostgreSQL schema, as the bench's database) synced from the embedded local upstream; two
 * subscriptions to every change type: one receiver answers 204 at once, the other 503 to each first attempt (so
 * that every event is retried once, 5 s later by the default schedule). A third subscription, to sales' price
 * changes only, fails each first attempt too: how late its few retries come while the first two are flooded is the
 * figure of fairness across subscriptions (issue 66). The market moves `days` days and a sync
 * brings the changes in with no dispatcher running (a backlog); then it moves as much again, and the dispatcher
 * starts with the second sync: the deliveries made while that sync runs are the figure.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../src/config.js';
import { CHANGE_TYPES } from '../src/domain/change.js';
import { issueKey } from '../src/keys/key-admin.js';
import { addSubscription } from '../src/notify/webhook-admin.js';
import { startRuntime } from '../src/runtime.js';

/** A mirror of its own for a measurement: a fresh SQLite file in `dir`, or a fresh schema of the bench's PostgreSQL. */
export async function freshMirror(databaseUrl: string, dir: string, name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!/^postgres(ql)?:/.test(databaseUrl)) {
    const url = join(dir, `${name}.db`);
    const clear = () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(url + suffix, { force: true });
    };
    clear();
    return { url, drop: async () => clear() };
  }
  const schema = `nyc_listings_bench_${name.replace(/\W/g, '_')}_${process.pid}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  return {
    url: `${databaseUrl.split('?')[0]}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    drop: async () => {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

/** What the webhook scenario measured. */
export interface WebhookFigures {
  /** Events the market's two moves made (each delivered to both subscriptions). */
  events: number;
  /** The sync that brought them in, seconds, and the fast receiver's deliveries a second while it ran. */
  syncSeconds: number;
  deliveriesPerSecondDuringSync: number;
  /** The fast receiver's deliveries a second from its first to its last. */
  deliveriesPerSecond: number;
  /** How late each first retry came after it fell due (seconds): median, 99th percentile, worst. */
  firstRetryDelay: { p50: number; p99: number; max: number };
  /** The same for the third subscription's retries (sales' price changes), flooded by the other two. */
  otherSubscriptionRetryDelay: { retries: number; p50: number; p99: number; max: number };
  /** Deliveries that arrived more than once at a receiver (same webhook-id answered 2xx twice). */
  duplicates: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const round = (n: number) => Math.round(n * 100) / 100;

/** Runs the webhook scenario; see the file's comment. */
export async function webhookRate(config: Config, dir: string, logger: Logger, days = 3): Promise<WebhookFigures> {
  const mirror = await freshMirror(config.databaseUrl, dir, 'webhooks');
  const fastArrivals: number[] = [];
  const fastIds = new Set<string>();
  let duplicates = 0;
  const flakyFirst = new Map<string, number>();
  const retryDelays: number[] = [];
  const salesFirst = new Map<string, number>();
  const salesDelays: number[] = [];
  const { schedule } = config.webhooks;
  const receiver = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    const now = performance.now();
    req.resume();
    req.on('end', () => {
      if (req.url === '/fast') {
        fastArrivals.push(now);
        if (fastIds.has(id)) duplicates++;
        fastIds.add(id);
        return void res.writeHead(204).end();
      }
      const [firsts, delays] = req.url === '/sales' ? [salesFirst, salesDelays] : [flakyFirst, retryDelays];
      const first = firsts.get(id);
      if (first === undefined) {
        firsts.set(id, now);
        return void res.writeHead(503).end();
      }
      // Due one step of the schedule after the first attempt's answer.
      delays.push((now - first) / 1000 - schedule[1]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const runtime = await startRuntime(
    {
      ...config,
      databaseUrl: mirror.url,
      upstreamUrl: null,
      webhooks: { ...config.webhooks, allowPrivateTargets: true, pollSeconds: 0.05 },
    },
    { logger, initialSync: false, scheduler: false, webhooks: false, manualMarketClock: true },
  );
  try {
    await runtime.syncer.syncAll();
    await issueKey(runtime.keys, runtime.config, { plan: 'business', label: 'bench-webhooks', expires: null });
    const keyId = (await runtime.keys.list()).at(-1)!.id;
    const deps = {
      webhooks: runtime.webhooks,
      keys: runtime.keys,
      changes: runtime.changes,
      config: runtime.config,
      clock: () => new Date(),
    };
    const start = await runtime.changes.latestId();
    for (const path of ['/fast', '/flaky'])
      await addSubscription(deps, { keyId, url: `${base}${path}`, events: [...CHANGE_TYPES], filter: '' });
    await addSubscription(deps, { keyId, url: `${base}/sales`, events: ['listing.price_changed'], filter: 'kind=sale' });
    runtime.marketClock!.advance(days * 24 * 3_600_000);
    await runtime.syncer.syncAll();
    runtime.marketClock!.advance(days * 24 * 3_600_000);
    const syncStarted = performance.now();
    runtime.dispatcher.start();
    await runtime.syncer.syncAll();
    const syncEnded = performance.now();
    const events = (await runtime.changes.latestId()) - start;
    const deadline = Date.now() + 600_000;
    const done = () => fastIds.size >= events && retryDelays.length >= events && salesDelays.length >= salesFirst.size;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (fastIds.size < events || retryDelays.length < events)
      throw new Error(`webhook bench: ${fastIds.size} and ${retryDelays.length} of ${events} events delivered in 10 minutes`);
    const during = fastArrivals.filter((t) => t >= syncStarted && t <= syncEnded).length;
    const span = (Math.max(...fastArrivals) - Math.min(...fastArrivals)) / 1000;
    const delays = retryDelays.sort((a, b) => a - b);
    const other = salesDelays.sort((a, b) => a - b);
    return {
      events,
      syncSeconds: round((syncEnded - syncStarted) / 1000),
      deliveriesPerSecondDuringSync: Math.round(during / ((syncEnded - syncStarted) / 1000)),
      deliveriesPerSecond: Math.round(fastArrivals.length / Math.max(span, 0.001)),
      firstRetryDelay: { p50: round(quantile(delays, 0.5)), p99: round(quantile(delays, 0.99)), max: round(delays.at(-1) ?? 0) },
      otherSubscriptionRetryDelay: {
        retries: other.length,
        p50: round(quantile(other, 0.5)),
        p99: round(quantile(other, 0.99)),
        max: round(other.at(-1) ?? 0),
      },
      duplicates,
    };
  } finally {
    await runtime.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await mirror.drop();
  }
}
