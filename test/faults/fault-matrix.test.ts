import { execFile as execFileCb } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, SHARED_DATA } from '../helpers/paths.js';
import { freePort, startProcess, type Started } from '../helpers/processes.js';
import { writeSharedDataWithoutRentHop } from '../helpers/shared-data.js';
import { waitFor } from '../helpers/wait.js';

// The fault matrix of issue 45 (docs/operations.md "Tested"): real processes of the service, each fault made
// for real (the emulators' fault settings, a receiver that is not there, SIGKILL, a PostgreSQL and a Redis of
// the test's own restarted), and in each case nothing lost and no 5xx to a client but a documented one.
// `npm run test:faults` runs it after building the command line; `.ci/run` runs it after `npm test`.

const execFile = promisify(execFileCb);
const dir = mkdtempSync(join(tmpdir(), 'nyc-listings-faults-'));
// The PostgreSQL of the test runs as `postgres`, which must reach its data folder inside this one.
chmodSync(dir, 0o755);
const output = resolve(ROOT, '.cache', 'test-output', 'faults');
mkdirSync(output, { recursive: true });
const processes: Started[] = [];
const agent = new Agent({ connections: 16 });

afterAll(async () => {
  for (const p of processes.reverse()) await p.stop('SIGKILL');
  await agent.close();
});

/** Starts the command line with `args` and `env` in the test's folder; its output goes to `.cache/test-output/faults/<name>.log`. */
function start(name: string, args: string[], env: Record<string, string>): Started {
  const p = startProcess(process.execPath, [CLI, ...args], {
    cwd: dir,
    env: { LOG_LEVEL: 'info', SHARED_DATA_DIR: SHARED_DATA, ...env },
    logFile: join(output, `${name}.log`),
  });
  processes.push(p);
  return p;
}

async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await execFile(process.execPath, [CLI, ...args], {
    cwd: dir,
    env: { ...process.env, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'silent', ...env },
  });
  return stdout.trim();
}

/**
 * How long a request of the test waits: well past the service's longest documented wait, a listing the mirror lacks
 * looked up while the caller waits (REQUEST_DEADLINE_SECONDS, then 504), on a busy machine.
 */
const REQUEST_TIMEOUT_MS = 60_000;

/** GET on a service: status, headers and the parsed JSON body (null when not JSON). */
async function fetchJson(url: string, key?: string): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const answer = await request(url, {
    dispatcher: agent,
    headers: key ? { authorization: `Bearer ${key}` } : {},
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const text = await answer.body.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: answer.statusCode, headers: answer.headers, body };
}

/**
 * A load of searches and listing lookups in `loops` loops until `stop()`, each loop about ten requests a second
 * (client traffic beside the background work, not a saturation test): every answer's status, and the 5xx with
 * their codes.
 */
function load(base: string, key: string, loops = 2) {
  const statuses = new Map<number, number>();
  const serverErrors: { status: number; code: string | undefined; retryAfter: unknown; at: number }[] = [];
  let running = true;
  let n = 0;
  const loop = async (i: number) => {
    while (running) {
      n++;
      // Distinct searches (a new price bound each time), so that they reach the database, not the answer cache.
      const path = n % 3 === 0 ? `/v1/property/${1000 + (n % 5000)}` : `/v1/search/rentals?maxPrice=${2000 + (n % 4000) + i}&perPage=5`;
      try {
        const { status, headers, body } = await fetchJson(`${base}${path}`, key);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500) serverErrors.push({ status, code: body?.code, retryAfter: headers['retry-after'], at: Date.now() });
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const done = Promise.all(Array.from({ length: loops }, (_, i) => loop(i)));
  return {
    statuses,
    serverErrors,
    count: () => [...statuses.values()].reduce((a, b) => a + b, 0),
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Reads a SQLite mirror another process writes (WAL: the reader sees the last commit). */
function readMirror<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The 5xx the API documents for an upstream that fails a lookup a caller waits for (docs/decisions.md). */
const UPSTREAM_CODES = ['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UPSTREAM_BUSY'];

/** Limits out of the way of the load (its answers are about faults, not plans). */
const ROOMY = { RATE_LIMIT_BUSINESS_PER_MINUTE: '1000000', QUOTA_BUSINESS_PER_MONTH: '100000000' };

const ACTIVE_BACKLOG = "select count(*) as n from listings where needs_detail = 1 and status = 'ACTIVE'";

describe('the local upstream fails 5 % of detail requests and stalls 2 % for 20 s during a first sync of the whole city', () => {
  const file = join(dir, 'city.db');
  let base = '';
  let key = '';
  let service: Started;
  const figures: Record<string, unknown> = {};

  it(
    'reaches backlog 0 and says so in /v1/health; no client sees a 5xx meanwhile',
    async () => {
      const env = {
        ...ROOMY,
        DATABASE_URL: file,
        LOCAL_UPSTREAM_FAULTS: 'errorRate=0.05,stallRate=0.02,stallMs=20000,on=details',
        SYNC_INTERVAL_SECONDS: '0',
      };
      key = await cli(['keys', 'issue', '--plan', 'business'], env);
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      const started = Date.now();
      service = start('upstream-faults', ['serve'], { ...env, PORT: String(port), METRICS_PORT: String(await freePort()) });
      // It listens at once and syncs in the background (the first start): the load runs through the whole first sync.
      await service.waitForLine(/nyc-listings listening/, 'the service to listen', 120_000);
      figures.listeningSeconds = (Date.now() - started) / 1000;
      const traffic = load(base, key);
      await service.waitForLine(/first sync done/, 'the first sync', 300_000);
      figures.firstSyncSeconds = (Date.now() - started) / 1000;
      let health: any;
      await waitFor(
        async () => {
          health = (await fetchJson(`${base}/v1/health`)).body;
          // A hydration run completed: the backlog is empty because it was hydrated, not because nothing is crawled yet.
          return health?.hydration?.backlog === 0 && !health.hydration.running && health.hydration.lastCompletedAt !== null;
        },
        'the hydration backlog to reach 0 under detail faults',
        15 * 60_000,
      );
      figures.backlogZeroSeconds = (Date.now() - started) / 1000;
      await traffic.stop();
      figures.requests = traffic.count();
      figures.statuses = Object.fromEntries(traffic.statuses);
      figures.hydration = health.hydration;
      console.log(`upstream detail faults: ${JSON.stringify(figures)}`);
      // A listing looked up while its detail request fails is a documented 502/504; nothing else is a 5xx.
      for (const e of traffic.serverErrors) expect(UPSTREAM_CODES).toContain(e.code);
      expect(traffic.statuses.get(500) ?? 0).toBe(0);
      expect(traffic.statuses.get(0) ?? 0).toBe(0);
      expect(health.hydration.lastCompletedAt).not.toBeNull();
      // Every active listing is hydrated or, its details failing every time, parked: none is left waiting.
      const counts = readMirror(file, (db) => ({
        backlog: (db.prepare(ACTIVE_BACKLOG).get() as { n: number }).n,
        parked: (db.prepare("select count(*) as n from listings where needs_detail = 2 and status = 'ACTIVE'").get() as { n: number }).n,
      }));
      expect(counts.backlog).toBe(0);
      expect(health.hydration.parked).toBe(counts.parked);
      // The faults were met: the metrics count the failed detail requests by kind.
      const metrics = await (
        await request(service.lines.map((l) => /"url":"(http:[^"]+\/metrics)"/.exec(l)?.[1]).find(Boolean)!)
      ).body.text();
      const failed = [
        ...metrics.matchAll(/nyc_listings_upstream_requests_total\{upstream="listings",outcome="(http|timeout)"\} (\d+)/g),
      ].map((m) => Number(m[2]));
      expect(failed.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    },
    20 * 60_000,
  );

  it(
    'with the upstream stalled, a lookup of a listing the mirror lacks is 504 UPSTREAM_TIMEOUT with Retry-After within REQUEST_DEADLINE_SECONDS; the lookup goes on and the next call finds it',
    async () => {
      const admin = service.lines.map((l) => /"admin":"(http:[^"]+)"/.exec(l)?.[1]).find(Boolean)!;
      const setFaults = async (faults: Record<string, unknown>) =>
        expect(
          (
            await request(`${admin}/faults`, {
              method: 'PUT',
              body: JSON.stringify(faults),
              headers: { 'content-type': 'application/json' },
            })
          ).statusCode,
        ).toBe(200);
      // A listing of the site the mirror does not hold (taken out of it behind the service's back).
      const id = readMirror(
        file,
        (db) => (db.prepare("select id from listings where kind = 'rental' and status = 'ACTIVE' limit 1").get() as { id: string }).id,
      );
      const db = new Database(file);
      for (const table of ['listing_amenities', 'price_history']) db.prepare(`delete from ${table} where listing_id = ?`).run(id);
      db.prepare('delete from listings where id = ?').run(id);
      db.close();
      await setFaults({ stallRate: 1, stallMs: 15_000, on: 'details', errorRate: 0 });
      const started = Date.now();
      const timedOut = await fetchJson(`${base}/v1/property/${id}`, key);
      const waited = (Date.now() - started) / 1000;
      await setFaults({ stallRate: 0 });
      expect({ status: timedOut.status, code: timedOut.body?.code, retryAfter: timedOut.headers['retry-after'] }).toEqual({
        status: 504,
        code: 'UPSTREAM_TIMEOUT',
        retryAfter: '5',
      });
      // REQUEST_DEADLINE_SECONDS (10), not the upstream's 15 s x 3 attempts x 2 kinds; a little more on a busy machine.
      expect(waited).toBeGreaterThanOrEqual(10);
      expect(waited).toBeLessThan(20);
      console.log(`deadline with the upstream stalled: 504 after ${waited} s`);
      // The lookup went on: once its stall ends, the listing is stored, and the next call answers it.
      await waitFor(
        async () => (await fetchJson(`${base}/v1/property/${id}`, key)).status === 200,
        'the listing looked up in the background',
        120_000,
      );
    },
    5 * 60_000,
  );

  describe('a webhook receiver is down for two minutes, then back', () => {
    it(
      'gets every event at least once, duplicates at most 1 %',
      async () => {
        await service.stop();
        const port = await freePort();
        const hookPort = await freePort();
        const admin = await freePort();
        const env = {
          ...ROOMY,
          DATABASE_URL: file,
          PORT: String(port),
          LOCAL_UPSTREAM_ADMIN_PORT: String(admin),
          SYNC_INTERVAL_SECONDS: '5',
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          WEBHOOK_POLL_SECONDS: '0.2',
          WEBHOOK_TIMEOUT_SECONDS: '2',
          // The first attempt at once, then waits that outlast a two-minute outage.
          WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,5,10,20,30,30,30,30,30,30',
        };
        service = start('webhook-outage', ['serve'], env);
        await service.waitForLine(/nyc-listings listening/, 'the service to start', 120_000);
        base = `http://127.0.0.1:${port}`;
        // `keys list`: a header line, then one tab-separated line a key, its id first.
        const keyId = (await cli(['keys', 'list'], env)).split('\n')[1].split('\t')[0];
        const added = await cli(
          [
            'webhooks',
            'add',
            '--key',
            keyId,
            '--url',
            `http://127.0.0.1:${hookPort}/hooks`,
            '--events',
            'listing.listed,listing.price_changed,listing.status_changed',
          ],
          env,
        );
        expect(added).toMatch(/wh_/);
        // Where the subscription starts: events after its cursor are its own.
        const head = String(
          readMirror(file, (db) => (db.prepare('select cursor from webhook_subscriptions').get() as { cursor: number }).cursor),
        );
        // A market day: listings listed, repriced and delisted; the scheduler's next sync brings them in.
        const advanced = await request(`http://127.0.0.1:${admin}/market/advance?hours=24`, { method: 'POST' });
        expect(advanced.statusCode).toBe(200);
        await advanced.body.dump();
        await waitFor(
          async () => (await fetchJson(`${base}/v1/changes?since=${head}&perPage=1`, key)).body.data.length > 0,
          "the sync to record the day's changes",
          300_000,
        );
        // Down: nothing listens on the receiver's port; from the first failed attempt, for two minutes.
        await service.waitForLine(/webhook attempt failed; will retry/, 'a first attempt to fail', 120_000);
        const downSince = Date.now();
        await waitFor(async () => Date.now() - downSince >= 120_000, 'two minutes of outage', 130_000);
        const received: string[] = [];
        const receiver: Server = createServer((req, res) => {
          req.resume();
          req.on('end', () => {
            received.push(String(req.headers['webhook-id']));
            res.writeHead(204).end();
          });
        });
        await new Promise<void>((resolvePromise) => receiver.listen(hookPort, '127.0.0.1', resolvePromise));
        try {
          /** Every event of the feed after the subscription's start, of its types. */
          const feed = async () => {
            const ids: string[] = [];
            let cursor = head;
            for (;;) {
              const page = (
                await fetchJson(
                  `${base}/v1/changes?since=${cursor}&perPage=500&types=listing.listed,listing.price_changed,listing.status_changed`,
                  key,
                )
              ).body;
              ids.push(...page.data.map((e: { id: string }) => String(e.id)));
              if (page.data.length < 500) return ids;
              cursor = page.meta.next;
            }
          };
          const eventOf = (webhookId: string) => /^msg_(\d+)_/.exec(webhookId)?.[1];
          let want: string[] = [];
          // The scheduler keeps syncing: the feed is read again until every event in it has reached the receiver.
          await waitFor(
            async () => {
              want = await feed();
              const got = new Set(received.map(eventOf));
              return want.every((id) => got.has(id));
            },
            'every event delivered once the receiver is back',
            6 * 60_000,
          );
          expect(want.length).toBeGreaterThan(10);
          const duplicates = received.length - new Set(received).size;
          console.log(
            `webhook outage of 120 s: ${want.length} events, ${received.length} deliveries, ${duplicates} duplicates (${((100 * duplicates) / received.length).toFixed(2)} %)`,
          );
          expect(duplicates / received.length).toBeLessThanOrEqual(0.01);
        } finally {
          await new Promise<void>((r) => receiver.close(() => r()));
          await service.stop();
        }
      },
      12 * 60_000,
    );
  });
});

describe('the worker (sync --watch) gets SIGKILL mid-hydration, then restarts', () => {
  it(
    "reaches backlog 0 with every listing's event in the change log",
    async () => {
      const shared = join(dir, 'shared-without-renthop');
      writeSharedDataWithoutRentHop(shared);
      const upstreamPort = await freePort();
      const sodaPort = await freePort();
      const file = join(dir, 'worker.db');
      const common = { SHARED_DATA_DIR: shared, MARKET_CLOCK: 'off' };
      const upstream = start(
        'worker-upstream',
        ['upstream', '--port', String(upstreamPort), '--open-data-port', String(sodaPort), '--admin-port', String(await freePort())],
        common,
      );
      await upstream.waitForLine(/local upstream on/, 'the emulators to start', 120_000);
      // Slow details (and one lane), so that the kill lands mid-hydration.
      const env = {
        ...common,
        DATABASE_URL: file,
        UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/`,
        OPEN_DATA_URL: `http://127.0.0.1:${sodaPort}`,
        UPSTREAM_PACING_SECONDS: '0',
        UPSTREAM_CONCURRENCY: '1',
        HYDRATION_BATCH: '20',
      };
      const first = start('worker-1', ['sync', '--watch', '--source', 'listings'], env);
      await waitFor(
        () => {
          try {
            return (
              readMirror(file, (db) => (db.prepare('select count(*) as n from listings where needs_detail = 0').get() as { n: number }).n) >
              500
            );
          } catch {
            return false;
          }
        },
        'the worker to be hydrating',
        300_000,
      );
      await first.stop('SIGKILL');
      const atKill = readMirror(file, (db) => (db.prepare(ACTIVE_BACKLOG).get() as { n: number }).n);
      expect(atKill).toBeGreaterThan(0);
      const second = start('worker-2', ['sync', '--watch', '--source', 'listings'], env);
      await waitFor(
        () => readMirror(file, (db) => (db.prepare(ACTIVE_BACKLOG).get() as { n: number }).n) === 0,
        'the restarted worker to hydrate the backlog',
        600_000,
      );
      await second.stop();
      const check = readMirror(file, (db) => ({
        listings: (db.prepare('select count(*) as n from listings').get() as { n: number }).n,
        listed: (
          db.prepare("select count(distinct listing_id) as n from change_events where type = 'listing.listed'").get() as { n: number }
        ).n,
        orphans: (
          db
            .prepare(
              "select count(*) as n from listings l where not exists (select 1 from change_events e where e.listing_id = l.id and e.type = 'listing.listed')",
            )
            .get() as { n: number }
        ).n,
      }));
      console.log(`worker killed mid-hydration with ${atKill} listings waiting; after the restart: ${JSON.stringify(check)}`);
      expect(check.orphans).toBe(0);
      expect(check.listed).toBe(check.listings);
    },
    15 * 60_000,
  );
});

/** The PostgreSQL binaries: where `pg_ctl` lives (Debian keeps them under /usr/lib/postgresql/<version>/bin). */
async function pgBin(): Promise<string> {
  const { stdout } = await execFile('bash', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1']);
  return stdout.trim();
}

/** Runs a PostgreSQL tool as the `postgres` user (initdb and the server refuse root). */
async function asPostgres(command: string, args: string[]): Promise<string> {
  const { stdout } = await execFile('runuser', ['-u', 'postgres', '--', command, ...args]);
  return stdout;
}

describe('PostgreSQL restarts under load (on PostgreSQL and Redis)', () => {
  it(
    'reads resume within 10 s; meanwhile 503 with Retry-After, never 500',
    async () => {
      const bin = await pgBin();
      const data = join(dir, 'pg');
      mkdirSync(data);
      chownSync(data, Number((await execFile('id', ['-u', 'postgres'])).stdout), Number((await execFile('id', ['-g', 'postgres'])).stdout));
      const pgPort = await freePort();
      await asPostgres(`${bin}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres']);
      const ctl = (...args: string[]) =>
        asPostgres(`${bin}/pg_ctl`, [
          '-D',
          data,
          '-l',
          join(data, 'server.log'),
          '-o',
          `-p ${pgPort} -k ${data} -c listen_addresses=127.0.0.1`,
          '-w',
          ...args,
        ]);
      await ctl('start');
      try {
        const shared = join(dir, 'shared-pg');
        writeSharedDataWithoutRentHop(shared);
        const env = {
          ...ROOMY,
          SHARED_DATA_DIR: shared,
          DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
          REDIS_URL: 'redis://127.0.0.1:6379',
          REDIS_KEY_PREFIX: `nyc-listings-faults-${process.pid}:`,
          MARKET_CLOCK: 'off',
          SYNC_INTERVAL_SECONDS: '0',
        };
        const key = await cli(['keys', 'issue', '--plan', 'business'], env);
        const port = await freePort();
        const service = start('postgres-restart', ['serve'], { ...env, PORT: String(port) });
        await service.waitForLine(/nyc-listings listening/, 'the service to listen on PostgreSQL', 120_000);
        // Restarted once every scope is in; the details are still being hydrated, and must go on after it.
        await service.waitForLine(/first sync done/, 'the first sync on PostgreSQL', 600_000);
        const base = `http://127.0.0.1:${port}`;
        const traffic = load(base, key);
        let [restartAt, upAt, resumedAt] = [0, 0, 0];
        try {
          await waitFor(() => traffic.count() > 20, 'the load to run');
          restartAt = Date.now();
          await ctl('restart', '-m', 'fast');
          upAt = Date.now();
          // Reads resume: a distinct search (not in the answer cache) answers 200 within 10 s of the server being back.
          await waitFor(
            async () => {
              const { status } = await fetchJson(`${base}/v1/search/rentals?maxPrice=${Date.now() % 100_000}&perPage=3`, key);
              if (status === 200) resumedAt = Date.now();
              return status === 200;
            },
            'reads to resume after the restart',
            60_000,
          );
          const afterRestart = traffic.count();
          await waitFor(() => traffic.count() > afterRestart + 50, 'more load after the restart');
        } finally {
          await traffic.stop();
        }
        await service.stop();
        console.log(
          `PostgreSQL restart: took ${upAt - restartAt} ms; reads back ${resumedAt - upAt} ms after; ${traffic.count()} requests, statuses ${JSON.stringify(Object.fromEntries(traffic.statuses))}`,
        );
        expect(resumedAt - upAt).toBeLessThanOrEqual(10_000);
        for (const e of traffic.serverErrors) {
          if (UPSTREAM_CODES.includes(e.code!)) continue;
          expect(e).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE', retryAfter: '5' });
        }
        expect(traffic.statuses.get(500) ?? 0).toBe(0);
      } finally {
        await ctl('stop', '-m', 'immediate').catch(() => undefined);
      }
    },
    15 * 60_000,
  );
});

describe('Redis restarts under load', () => {
  it(
    'rate limits fall back to in-process counters and resume on Redis, no request fails',
    async () => {
      const redisPort = await freePort();
      const startRedis = (name: string) => {
        const p = startProcess('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
          cwd: dir,
          env: {},
          logFile: join(output, `${name}.log`),
        });
        processes.push(p);
        return p;
      };
      let redis = startRedis('redis-1');
      await redis.waitForLine(/Ready to accept connections/, 'redis to start');
      // The whole city's mirror of the first case, copied: no sync to wait for.
      const file = join(dir, 'redis.db');
      for (const suffix of ['', '-wal'])
        if (existsSync(join(dir, `city.db${suffix}`))) copyFileSync(join(dir, `city.db${suffix}`), file + suffix);
      const port = await freePort();
      const env = {
        DATABASE_URL: file,
        PORT: String(port),
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        SYNC_INTERVAL_SECONDS: '0',
        MARKET_CLOCK: 'off',
        RATE_LIMIT_FREE_PER_MINUTE: '30',
      };
      const service = start('redis-restart', ['serve'], env);
      await service.waitForLine(/nyc-listings listening/, 'the service to start', 120_000);
      const base = `http://127.0.0.1:${port}`;
      // The start's own work (the index's build, the valuation) can hold the event loop past Redis' command timeout,
      // and a command that times out is counted in-process (the insurance): the count with Redis is taken once it is done.
      await waitFor(
        async () => {
          const health = (await fetchJson(`${base}/v1/health`)).body;
          return health?.searchIndex?.builds >= 1 && !health.searchIndex.building && !health.valuation?.running;
        },
        'the index built and the valuation done',
        120_000,
      );
      const anonymous = async () => {
        const { status, body } = await fetchJson(`${base}/v1/search/sales?perPage=1`);
        return { status, code: body?.code as string | undefined };
      };
      const phase = async (n: number) => {
        const seen: { status: number; code?: string }[] = [];
        for (let i = 0; i < n; i++) seen.push(await anonymous());
        return seen;
      };
      // With Redis: the anonymous limit of 30 a minute holds.
      const before = await phase(40);
      expect(before.filter((s) => s.status === 200).length).toBe(30);
      expect(before.filter((s) => s.status === 429).every((s) => s.code === 'RATE_LIMIT_EXCEEDED')).toBe(true);
      await redis.stop('SIGKILL');
      await service.waitForLine(/redis unreachable/, 'the service to notice Redis is gone', 30_000);
      // Without Redis: each instance counts in-process (docs/decisions.md); nothing fails, nothing waits on Redis.
      const during = await phase(40);
      expect(during.every((s) => s.status === 200 || s.status === 429)).toBe(true);
      expect(during.filter((s) => s.status === 200).length).toBeLessThanOrEqual(30);
      expect(during.some((s) => s.status === 429)).toBe(true);
      redis = startRedis('redis-2');
      await redis.waitForLine(/Ready to accept connections/, 'redis to start again');
      await service.waitForLine(/redis reachable again/, 'the service to use Redis again', 30_000);
      const after = await phase(10);
      expect(after.every((s) => s.status === 200 || s.status === 429)).toBe(true);
      await service.stop();
      console.log(
        `redis restart: with ${JSON.stringify(count(before))}, without ${JSON.stringify(count(during))}, after ${JSON.stringify(count(after))}`,
      );
    },
    5 * 60_000,
  );
});

function count(seen: { status: number }[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of seen) out[s.status] = (out[s.status] ?? 0) + 1;
  return out;
}
