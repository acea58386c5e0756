import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createParser } from 'eventsource-parser';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGE_TYPES } from '../../src/domain/change.js';
import { CLI, ROOT } from '../helpers/paths.js';
import { freePort, startProcess, type Started } from '../helpers/processes.js';
import { startReceiver } from '../helpers/receiver.js';
import { writeSharedDataWithoutRentHop } from '../helpers/shared-data.js';
import { waitFor } from '../helpers/wait.js';

// Several instances behind a real load balancer (docs/operations.md): HAProxy, run with deploy/haproxy.cfg,
// in front of two API-only instances (serve --api-only) and one worker (sync --watch), on the machine's
// PostgreSQL and Redis, with the local emulators (nyc-listings upstream) as the sources, every one a process
// of its own on loopback. A load of searches, listing details and change streams runs for LOAD_SECONDS while
// the market moves; one API instance is killed with SIGKILL in the middle and started again.

const PG_SERVER = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOAD_SECONDS = 36;
/** Concurrent request loops of the load, and open change streams. */
const LOOPS = 8;
const STREAMS = 4;
/** The anonymous per-address limit the instances are given (per minute), to show it is shared. */
const ANONYMOUS_LIMIT = 20;

const schema = `nyc_listings_cluster_${process.pid}_${Date.now()}`;
const prefix = `nyc-listings-cluster-${process.pid}:`;
const dir = mkdtempSync(join(tmpdir(), 'nyc-listings-cluster-'));
const output = resolve(ROOT, '.cache', 'test-output', 'cluster');

interface Answer {
  path: string;
  start: number;
  end: number;
  /** 0: no answer (the connection failed). */
  status: number;
  servedBy: string | null;
  error?: string;
}

interface Stream {
  events: { id: number; type: string }[];
  /** Each connection: when, the instance that held it and the Last-Event-ID it resumed from. */
  connections: { at: number; servedBy: string | null; status: number; lastEventId: string | null }[];
  abort: AbortController;
  done: Promise<void>;
}

/** One line of HAProxy's log (deploy/haproxy.cfg's log-format). */
interface LogLine {
  /** When HAProxy accepted the request (ms since the epoch), and how long it was active (ms). */
  at: number;
  activeMs: number;
  server: string;
  status: number;
  retries: string;
  termination: string;
  path: string;
}

const processes: Started[] = [];
let admin: pg.Client;
let haproxy: Started;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const agent = new Agent({ connections: 32, pipelining: 1 });
/** What the scenario measured, for the tests below and the printed figures. */
const seen = {
  beforeSync: { search: { status: 0, code: '', retryAfter: '' as string | undefined }, health: 0 },
  /** After the worker's valuation: whether each API instance says it values, and what the store and a search hold. */
  valuation: { apiEnabled: [] as boolean[], stored: 0, active: 0, searched: -1, expected: -2 },
  startHead: 0,
  endHead: 0,
  answers: [] as Answer[],
  streams: [] as Stream[],
  killedAt: 0,
  victim: '',
  restartedAt: 0,
  inFlightAtKill: 0,
  lastAdvanceAt: 0,
  expectedDeliveries: [] as number[],
  limits: [] as { status: number; servedBy: string | null }[],
  log: [] as LogLine[],
  secondsOfLoad: 0,
};

const env = (urls: { upstream: string; openData: string }, sharedData: string): Record<string, string> => ({
  DATABASE_URL: `${PG_SERVER}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
  REDIS_URL,
  REDIS_KEY_PREFIX: prefix,
  UPSTREAM_URL: urls.upstream,
  OPEN_DATA_URL: urls.openData,
  // The emulators are on loopback: no pacing meant for the real site.
  UPSTREAM_PACING_SECONDS: '0',
  UPSTREAM_CONCURRENCY: '4',
  SHARED_DATA_DIR: sharedData,
  SYNC_INTERVAL_SECONDS: '4',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_SECONDS: '0.2',
  CHANGES_STREAM_POLL_SECONDS: '0.2',
  TRUST_PROXY: 'true',
  RATE_LIMIT_FREE_PER_MINUTE: String(ANONYMOUS_LIMIT),
  RATE_LIMIT_BUSINESS_PER_MINUTE: '10000000',
  QUOTA_BUSINESS_PER_MONTH: '100000000',
  LOG_LEVEL: 'info',
});

const now = () => Date.now();
const until = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - now())));
const headers = (key: string) => ({ authorization: `Bearer ${key}` });

async function cli(args: string[], vars: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, ...vars } });
  return stdout;
}

function start(name: string, args: string[], vars: Record<string, string>): Started {
  const started = startProcess(process.execPath, [CLI, ...args], { env: vars, cwd: dir, logFile: join(output, `${name}.log`) });
  processes.push(started);
  return started;
}

async function get(base: string, path: string, extra: Record<string, string> = {}): Promise<Answer & { body: string }> {
  const started = now();
  try {
    const res = await request(`${base}${path}`, { dispatcher: agent, headers: extra });
    const body = await res.body.text();
    return {
      path,
      start: started,
      end: now(),
      status: res.statusCode,
      servedBy: (res.headers['x-served-by'] as string | undefined) ?? null,
      body,
    };
  } catch (error) {
    return { path, start: started, end: now(), status: 0, servedBy: null, error: (error as Error).message, body: '' };
  }
}

/** Follows the change stream from event `since` as EventSource does: on a drop, it reconnects with Last-Event-ID. */
function follow(base: string, key: string, since: number): Stream {
  const stream: Stream = { events: [], connections: [], abort: new AbortController(), done: Promise.resolve() };
  stream.done = (async () => {
    while (!stream.abort.signal.aborted) {
      const last = stream.events.at(-1)?.id;
      try {
        const res = await request(`${base}/v1/changes/stream?since=${since}`, {
          dispatcher: agent,
          headers: { ...headers(key), ...(last !== undefined ? { 'last-event-id': String(last) } : {}) },
          signal: stream.abort.signal,
        });
        stream.connections.push({
          at: now(),
          servedBy: (res.headers['x-served-by'] as string | undefined) ?? null,
          status: res.statusCode,
          lastEventId: last === undefined ? null : String(last),
        });
        if (res.statusCode === 200) {
          const parser = createParser({ onEvent: (e) => stream.events.push({ id: Number(e.id), type: e.event ?? 'message' }) });
          for await (const chunk of res.body) parser.feed(chunk.toString());
        } else await res.body.dump();
      } catch {
        // the connection dropped (its instance was killed) or the test closed it
      }
      // EventSource's reconnection delay.
      if (!stream.abort.signal.aborted) await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return stream;
}

beforeAll(async () => {
  mkdirSync(output, { recursive: true });
  admin = new pg.Client({ connectionString: PG_SERVER });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const sharedData = join(dir, 'shared-data');
  writeSharedDataWithoutRentHop(sharedData);
  receiver = await startReceiver(() => 200);
  const [upstreamPort, adminPort, openDataPort, portA, portB, frontPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);

  const upstream = start(
    'upstream',
    ['upstream', '--port', String(upstreamPort), '--admin-port', String(adminPort), '--open-data-port', String(openDataPort)],
    { SHARED_DATA_DIR: sharedData, LOG_LEVEL: 'info' },
  );
  await upstream.waitForLine(/local upstream on/, 'the local emulators listening');
  const vars = env({ upstream: `http://127.0.0.1:${upstreamPort}/`, openData: `http://127.0.0.1:${openDataPort}` }, sharedData);
  const apiArgs = (port: number) => ['serve', '--api-only', '--host', '127.0.0.1', '--port', String(port)];
  const api: Record<string, { port: number; process: Started }> = {
    api1: { port: portA, process: start('api1', apiArgs(portA), vars) },
    api2: { port: portB, process: start('api2', apiArgs(portB), vars) },
  };
  await Promise.all(Object.values(api).map((a) => a.process.waitForLine(/listening on/, 'an API instance listening')));

  // Before the worker's first sync: nothing to serve.
  const early = await get(`http://127.0.0.1:${portA}`, '/v1/search/rentals');
  seen.beforeSync.search = { status: early.status, code: JSON.parse(early.body).code, retryAfter: undefined };
  const earlyRaw = await request(`http://127.0.0.1:${portA}/v1/search/rentals`, { dispatcher: agent });
  seen.beforeSync.search.retryAfter = earlyRaw.headers['retry-after'] as string | undefined;
  await earlyRaw.body.dump();
  seen.beforeSync.health = (await get(`http://127.0.0.1:${portB}`, '/v1/health')).status;

  // The documented HAProxy configuration, with this run's ports.
  const config = readFileSync(resolve(ROOT, 'deploy', 'haproxy.cfg'), 'utf8')
    .replace('127.0.0.1:8080', `127.0.0.1:${frontPort}`)
    .replace('127.0.0.1:3001', `127.0.0.1:${portA}`)
    .replace('127.0.0.1:3002', `127.0.0.1:${portB}`);
  writeFileSync(join(dir, 'haproxy.cfg'), config);
  haproxy = startProcess('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { env: {}, cwd: dir, logFile: join(output, 'haproxy.log') });
  processes.push(haproxy);
  const front = `http://127.0.0.1:${frontPort}`;

  const worker = start('worker', ['sync', '--watch', '--source', 'listings'], vars);
  await worker.waitForLine(/"msg":"sync done"/, "the worker's first sync", 240_000);
  // Both instances in HAProxy's rotation: its health checks found them serving.
  await waitFor(
    async () => {
      const servers = new Set<string | null>();
      for (let i = 0; i < 4; i++) servers.add((await get(front, '/v1/health')).servedBy);
      return servers.has('api1') && servers.has('api2');
    },
    'both instances up behind HAProxy',
    60_000,
  );

  // The worker values the listings after its sync; the API instances, which sync nothing, never do, and answer from
  // the positions it stored.
  await worker.waitForLine(/"msg":"valuation done"/, "the worker's valuation", 240_000);
  for (const port of [portA, portB]) {
    seen.valuation.apiEnabled.push(JSON.parse((await get(`http://127.0.0.1:${port}`, '/v1/health')).body).valuation.enabled);
  }
  const counts = (
    await admin.query(
      `select count(*) filter (where price_position is not null) as stored, count(*) as active,
              count(*) filter (where kind = 'rental' and price_position <= -5) as under
         from ${schema}.listings where status = 'ACTIVE'`,
    )
  ).rows[0];
  seen.valuation.stored = Number(counts.stored);
  seen.valuation.active = Number(counts.active);
  seen.valuation.expected = Number(counts.under);
  seen.valuation.searched = JSON.parse((await get(front, '/v1/search/rentals?maxPricePosition=-5&perPage=1')).body).meta.total;

  const key = (await cli(['keys', 'issue', '--plan', 'business', '--label', 'cluster load'], vars)).trim();
  const keyId = (await cli(['keys', 'list'], vars))
    .split('\n')
    .find((l) => l.includes('cluster load'))!
    .split('\t')[0];
  await cli(['webhooks', 'add', '--key', keyId, '--url', `${receiver.url}/hooks`, '--events', CHANGE_TYPES.join(',')], vars);

  // The load: searches and details from LOOPS loops, and STREAMS change streams from where the webhook
  // subscription starts, through HAProxy.
  seen.startHead = Number((await admin.query(`select cursor from ${schema}.webhook_subscriptions`)).rows[0].cursor);
  const ids: string[] = [];
  let inFlight = 0;
  let stopped = false;
  const t0 = now();
  const searches = [
    ...[0, 1500, 2500, 3500, 5000].map((min) => `/v1/search/rentals?minPrice=${min}&maxPrice=${min + 1500}&perPage=50`),
    ...[0, 500000, 1000000, 2000000].map((min) => `/v1/search/sales?minPrice=${min}&maxPrice=${min * 2 + 500000}&perPage=50&sort=PRICE`),
  ];
  const loop = async (n: number) => {
    for (let i = n; !stopped; i += LOOPS) {
      const path = i % 5 < 3 || ids.length === 0 ? searches[i % searches.length] : `/v1/property/${ids[(i * 7919) % ids.length]}`;
      inFlight++;
      const answer = await get(front, path, headers(key));
      inFlight--;
      seen.answers.push({ ...answer, body: undefined } as Answer);
      if (answer.status === 200 && path.startsWith('/v1/search') && ids.length < 2000)
        ids.push(...(JSON.parse(answer.body).data as { id: string }[]).map((l) => l.id));
    }
  };
  seen.streams = Array.from({ length: STREAMS }, () => follow(front, key, seen.startHead));
  const loops = Array.from({ length: LOOPS }, (_, n) => loop(n));
  const advance = async () => {
    seen.lastAdvanceAt = now();
    const res = await request(`http://127.0.0.1:${adminPort}/market/advance?hours=3`, { method: 'POST' });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  };

  await until(t0 + 2_000);
  await advance();
  await until(t0 + 10_000);
  // The instance holding the first stream is killed.
  await waitFor(() => seen.streams[0].connections.length > 0, 'the first stream connected');
  seen.victim = seen.streams[0].connections[0].servedBy!;
  seen.inFlightAtKill = inFlight;
  seen.killedAt = now();
  api[seen.victim].process.child.kill('SIGKILL');
  await api[seen.victim].process.exited;
  await until(t0 + 12_000);
  await advance();
  await until(t0 + 18_000);
  seen.restartedAt = now();
  api[seen.victim].process = start(`${seen.victim}-restarted`, apiArgs(api[seen.victim].port), vars);
  await api[seen.victim].process.waitForLine(/listening on/, 'the killed instance listening again');
  await until(t0 + 24_000);
  await advance();
  await until(t0 + LOAD_SECONDS * 1000);
  // The restarted instance is back in the rotation before the load ends.
  await waitFor(
    () => seen.answers.some((a) => a.servedBy === seen.victim && a.start > seen.restartedAt),
    'the restarted instance answering through HAProxy',
    60_000,
  );
  stopped = true;
  await Promise.all(loops);
  seen.secondsOfLoad = (now() - t0) / 1000;

  // The worker has crawled every listing scope since the last move of the market; the streams and the
  // webhook receiver then have everything up to the head.
  await waitFor(
    async () => {
      const { rows } = await admin.query(
        `select count(*) as n from ${schema}.sync_scopes where (scope like 'rental:%' or scope like 'sale:%') and last_success_at > $1`,
        [new Date(seen.lastAdvanceAt).toISOString()],
      );
      return Number(rows[0].n) === 10;
    },
    'every listing scope synced after the last market move',
    120_000,
  );
  seen.endHead = Number((await admin.query(`select max(id) as id from ${schema}.change_events`)).rows[0].id);
  await waitFor(() => seen.streams.every((s) => (s.events.at(-1)?.id ?? 0) >= seen.endHead), 'every stream at the head', 60_000);
  seen.expectedDeliveries = (
    await admin.query(`select id from ${schema}.change_events where id > $1 order by id`, [seen.startHead])
  ).rows.map((r) => Number(r.id));
  await waitFor(
    () => new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size >= seen.expectedDeliveries.length,
    'every event delivered to the webhook',
    60_000,
  );
  // Deliveries still due would show as repeats: the subscription has read the whole log, and none is left.
  await waitFor(
    async () => {
      const { rows } = await admin.query(
        `select (select cursor from ${schema}.webhook_subscriptions) as cursor, (select count(*) from ${schema}.webhook_deliveries where status <> 'delivered') as due`,
      );
      return Number(rows[0].cursor) >= seen.endHead && Number(rows[0].due) === 0;
    },
    'no webhook delivery due',
    30_000,
  );
  for (const s of seen.streams) s.abort.abort();
  await Promise.all(seen.streams.map((s) => s.done));

  // Limits are shared: one address without a key, through both instances.
  for (let i = 0; i < ANONYMOUS_LIMIT + 10; i++) {
    const answer = await get(front, '/v1/search/rentals?perPage=1', { 'x-forwarded-for': '203.0.113.7' });
    seen.limits.push({ status: answer.status, servedBy: answer.servedBy });
  }

  seen.log = haproxy.lines.flatMap((line) => {
    const m = /^(\d+)\.(\d+) (\S+) (-?\d+) (-?\d+) (\+?\d+) (\S+) (\S+) (\S+)$/.exec(line);
    return m
      ? [
          {
            at: Number(m[1]) * 1000 + Number(m[2]),
            activeMs: Number(m[5]),
            server: m[3],
            status: Number(m[4]),
            retries: m[6],
            termination: m[7],
            path: m[9],
          },
        ]
      : [];
  });
  printFigures();
}, 600_000);

afterAll(async () => {
  await agent.close();
  await Promise.all(processes.map((p) => p.stop()));
  await receiver?.close();
  await admin?.query(`drop schema if exists ${schema} cascade`);
  await admin?.end();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

/** The figures the issue asks for, on stdout and in .cache/test-output/cluster/figures.json. */
function printFigures(): void {
  const byStatus = count(seen.answers.map((a) => String(a.status)));
  const byServer = count(seen.answers.map((a) => a.servedBy ?? 'none'));
  const failed = seen.answers.filter((a) => a.status === 0 || a.status >= 500);
  // A request HAProxy sent again to the other instance (retries '+N') was accepted while the killed one held it,
  // or was sent to it after the kill, before HAProxy took it out of the rotation.
  const redispatched = seen.log.filter((l) => l.retries.startsWith('+'));
  const heldByKilled = redispatched.filter((l) => l.at <= seen.killedAt);
  const figures = {
    seconds: seen.secondsOfLoad,
    requests: seen.answers.length,
    byStatus,
    byServer,
    killed: seen.victim,
    inFlightAtKill: seen.inFlightAtKill,
    failedToClients: failed.map((a) => ({
      path: a.path,
      status: a.status,
      servedBy: a.servedBy,
      error: a.error,
      startedMsBeforeKill: seen.killedAt - a.start,
      endedMsAfterKill: a.end - seen.killedAt,
    })),
    inFlightOnKilledInstance: heldByKilled.length + failed.length,
    retriedOnTheOtherByHaproxy: {
      inFlightAtKill: heldByKilled.length,
      sentAfterKillBeforeMarkedDown: redispatched.length - heldByKilled.length,
    },
    haproxyErrors: seen.log.filter((l) => l.status >= 500 || l.status < 0).map((l) => `${l.server} ${l.status} ${l.termination} ${l.path}`),
    events: seen.expectedDeliveries.length,
    streams: seen.streams.map((s) => ({
      events: s.events.length,
      connections: s.connections.map((c) => `${c.servedBy} after ${c.lastEventId ?? 'start'}`),
    })),
    webhookRequests: receiver.requests.length,
    webhookDistinct: new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size,
    anonymousLimit: count(seen.limits.map((l) => `${l.status} ${l.servedBy}`)),
  };
  writeFileSync(join(output, 'figures.json'), JSON.stringify(figures, null, 2));
  console.log(`several instances behind HAProxy:\n${JSON.stringify(figures, null, 2)}`);
}

function count(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

describe('two API instances and a worker behind HAProxy, on PostgreSQL and Redis', () => {
  it("an API-only instance answers 503 UNAVAILABLE with Retry-After until the worker's first sync, and its health is 503", () => {
    expect(seen.beforeSync.search).toEqual({ status: 503, code: 'UNAVAILABLE', retryAfter: '10' });
    expect(seen.beforeSync.health).toBe(503);
  });

  it("the worker stores every listing's price position after its sync; the API instances search by them and value none", () => {
    expect(seen.valuation.apiEnabled).toEqual([false, false]);
    expect(seen.valuation.stored).toBeGreaterThan(0.9 * seen.valuation.active);
    expect(seen.valuation.searched).toBe(seen.valuation.expected);
    expect(seen.valuation.expected).toBeGreaterThan(0);
  });

  it('the load ran for the whole time on both instances, and the killed one served again once restarted', () => {
    expect(seen.secondsOfLoad).toBeGreaterThanOrEqual(LOAD_SECONDS);
    const served = new Set(seen.answers.map((a) => a.servedBy));
    expect(served).toEqual(new Set(['api1', 'api2', ...(seen.answers.some((a) => a.servedBy === null) ? [null] : [])]));
    expect(seen.answers.some((a) => a.servedBy === seen.victim && a.start > seen.restartedAt && a.status === 200)).toBe(true);
    expect(seen.answers.filter((a) => a.status === 200).length).toBeGreaterThan(seen.answers.length * 0.99);
  });

  it('no request failed but those in flight when the instance was killed', () => {
    const failed = seen.answers.filter((a) => a.status === 0 || a.status >= 500 || (a.status !== 200 && a.status !== 304));
    for (const a of failed) {
      expect(a.start, `${a.path} ${a.status} ${a.error ?? ''}`).toBeLessThanOrEqual(seen.killedAt);
      expect(a.end).toBeGreaterThanOrEqual(seen.killedAt);
    }
    expect(failed.length).toBeLessThanOrEqual(seen.inFlightAtKill);
  });

  it('every stream got every event once, in order, across the kill; the one on the killed instance resumed with Last-Event-ID on the other', () => {
    expect(seen.expectedDeliveries.length).toBeGreaterThan(0);
    for (const s of seen.streams) expect(s.events.map((e) => e.id)).toEqual(seen.expectedDeliveries);
    const first = seen.streams[0].connections;
    expect(first[0].servedBy).toBe(seen.victim);
    const resumed = first.find((c, i) => i > 0 && c.status === 200);
    expect(resumed).toBeDefined();
    expect(resumed!.lastEventId).not.toBeNull();
  });

  it('the webhook receiver got each event once, from the worker', () => {
    const ids = receiver.requests.map((r) => Number(JSON.parse(r.body).data.id)).sort((a, b) => a - b);
    expect(ids).toEqual(seen.expectedDeliveries);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(receiver.requests.length);
  });

  it('the per-address limit is counted once for both instances (Redis)', () => {
    const ok = seen.limits.filter((l) => l.status === 200);
    expect(ok.length).toBe(ANONYMOUS_LIMIT);
    expect(seen.limits.filter((l) => l.status === 429).length).toBe(10);
    expect(new Set(ok.map((l) => l.servedBy))).toEqual(new Set(['api1', 'api2']));
  });
});
