import { chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { ACTIVE_BACKLOG, execFile, faultRun, fetchJson, load, readMirror, ROOMY, UPSTREAM_CODES } from './fault-run.js';

// The fault matrix's restarts (issue 45, docs/operations.md "Tested"): a worker killed with SIGKILL mid-hydration, and a
// PostgreSQL of the test's own restarted under load, each on a mirror of its own (the city without RentHop), beside the
// cases on the whole city's mirror (city-faults.test.ts) and the webhook receiver's outage (webhook-outage.test.ts).

const run = faultRun();

describe('the worker (sync --watch) gets SIGKILL mid-hydration, then restarts', () => {
  it(
    "reaches backlog 0 with every listing's event in the change log",
    async () => {
      const shared = run.sharedWithoutRentHop('shared-without-renthop');
      const upstreamPort = await freePort();
      const sodaPort = await freePort();
      const file = join(run.dir, 'worker.db');
      const common = { SHARED_DATA_DIR: shared, MARKET_CLOCK: 'off' };
      const upstream = run.start(
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
      const first = run.start('worker-1', ['sync', '--watch', '--source', 'listings'], env);
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
      const second = run.start('worker-2', ['sync', '--watch', '--source', 'listings'], env);
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
      const data = join(run.dir, 'pg');
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
        const shared = run.sharedWithoutRentHop('shared-pg');
        const env = {
          ...ROOMY,
          SHARED_DATA_DIR: shared,
          DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
          REDIS_URL: 'redis://127.0.0.1:6379',
          REDIS_KEY_PREFIX: `nyc-listings-faults-${process.pid}:`,
          MARKET_CLOCK: 'off',
          SYNC_INTERVAL_SECONDS: '0',
        };
        const key = await run.cli(['keys', 'issue', '--plan', 'business'], env);
        const port = await freePort();
        const service = run.start('postgres-restart', ['serve'], { ...env, PORT: String(port) });
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
