import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, SHARED_DATA_WITHOUT_RENTHOP } from '../helpers/paths.js';
import { freePort, startProcess, type Started } from '../helpers/processes.js';
import { loadSiteData } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// `serve` as `npm start` runs it, its syncs and jobs in the background thread (BACKGROUND_THREAD, on by default;
// src/runtime/background-*.ts), from an empty mirror of the city without RentHop: the API thread answers from the
// first moment, a scope the thread has not synced yet being `refreshing`; the thread syncs, hydrates and values, and
// /v1/health shows its state; the metrics of both threads are one scrape; SIGTERM stops both.
let service: Started;
let base = '';
let metricsUrl = '';
let adminUrl = '';
let databaseFile = '';

interface Health {
  status: string;
  hydration: { backlog: number; hydrated: number; running: boolean; lastCompletedAt: string | null };
  valuation: { runs: number; lastValued: number };
  webhooks: { running: boolean };
  walCheckpoints: { running: boolean; checkpoints: number } | null;
  scopes: { scope: string; lastSuccessAt: string | null; running: boolean; failing: boolean }[];
}
const health = async () => (await (await request(`${base}/v1/health`)).body.json()) as Health;
const search = async (path: string) => {
  const answer = await request(`${base}${path}`);
  return {
    status: answer.statusCode,
    body: (await answer.body.json()) as { meta: { source: string; total: number; refreshTriggered: boolean } },
  };
};
/** Active listings of a kind in a borough, counted in the mirror the thread wrote. */
const stored = (kind: string, boroughId: number) => {
  const db = new Database(databaseFile, { readonly: true });
  try {
    return (
      db.prepare("select count(*) as n from listings where kind = ? and borough_id = ? and status = 'ACTIVE'").get(kind, boroughId) as {
        n: number;
      }
    ).n;
  } finally {
    db.close();
  }
};

beforeAll(async () => {
  databaseFile = join(mkdtempSync(join(tmpdir(), 'serve-background-')), 'mirror.db');
  mkdirSync(join(ROOT, '.cache', 'test-output'), { recursive: true });
  const port = await freePort();
  const metricsPort = await freePort();
  base = `http://127.0.0.1:${port}`;
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  service = startProcess(process.execPath, [CLI, 'serve', '--port', String(port)], {
    cwd: ROOT,
    logFile: join(ROOT, '.cache', 'test-output', 'serve-background-thread.log'),
    env: {
      DATABASE_URL: databaseFile,
      SHARED_DATA_DIR: SHARED_DATA_WITHOUT_RENTHOP,
      LOG_LEVEL: 'info',
      MARKET_CLOCK: 'off',
      METRICS_PORT: String(metricsPort),
      LOCAL_STRIPE_STATE_FILE: '-',
      // Every search of the site a fifth of a second late: the first sync takes seconds, the rentals (last) longest.
      LOCAL_UPSTREAM_FAULTS: 'latencyMs=200,on=search',
      // No NYC Open Data (a closed port): its first sync would read the city's files for seconds, beside this one.
      OPEN_DATA_URL: 'http://127.0.0.1:9/',
    },
  });
  adminUrl = JSON.parse(await service.waitForLine(/"local upstream started"/, 'the local upstream in the background thread')).admin;
  await service.waitForLine(/nyc-listings listening/, 'the service to listen', 120_000);
}, 180_000);

afterAll(async () => {
  await service?.stop('SIGTERM');
});

describe('serve with its background thread', () => {
  it('answers at once, a scope not synced yet refreshing; the thread syncs, hydrates and values it all, shown in /v1/health', async () => {
    // The rentals come after the sales in the first sync: Manhattan's refreshing, their refresh queued in the background thread.
    const early = await search('/v1/search/rentals?areas=100&perPage=1');
    expect(early.status).toBe(200);
    expect(early.body.meta).toMatchObject({ source: 'refreshing', refreshTriggered: false });
    // Not synced yet (no row until the thread starts it, then none of its success).
    expect((await health()).scopes.find((s) => s.scope === 'rental:100')?.lastSuccessAt ?? null).toBeNull();
    // The latency was for the scopes' turns.
    await request(`${adminUrl}/faults`, {
      method: 'PUT',
      body: JSON.stringify({ latencyMs: 0 }),
      headers: { 'content-type': 'application/json' },
    });
    await waitFor(
      async () => {
        const h = await health();
        return h.hydration.backlog === 0 && h.hydration.lastCompletedAt !== null && h.valuation.runs > 0;
      },
      'the first sync, its hydration and a valuation, in the background thread',
      120_000,
    );
    const done = await health();
    // Degraded by NYC Open Data alone (refused on purpose): every listing scope synced, none failing.
    expect(done.status).toBe('degraded');
    const listingScopes = done.scopes.filter((s) => /^(rental|sale):/.test(s.scope));
    expect(listingScopes.filter((s) => s.lastSuccessAt !== null && !s.failing)).toHaveLength(10);
    expect(done.scopes.filter((s) => s.failing).map((s) => s.scope)).toEqual(expect.arrayContaining(['recorded-sales']));
    const active = loadSiteData(true).listings.filter((l) => l.node.status === 'ACTIVE').length;
    expect(done.hydration.hydrated).toBe(active);
    expect(done.valuation.lastValued).toBe(active);
    expect(done.webhooks.running).toBe(true);
    expect(done.walCheckpoints).toMatchObject({ running: true });
    // The API thread sees the thread's writes within READ_CACHE_SECONDS.
    await waitFor(async () => (await search('/v1/search/rentals?areas=100&perPage=1')).body.meta.source === 'cached', 'the rentals cached');
    expect((await search('/v1/search/rentals?areas=100&perPage=1')).body.meta.total).toBe(stored('rental', 100));
    expect(stored('rental', 100)).toBeGreaterThan(0);
  }, 180_000);

  it('answers a lookup the background thread failed upstream as that upstream failure: 502 UPSTREAM_ERROR, never a 500', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'keys', 'issue', '--plan', 'pro'], {
      env: { ...process.env, DATABASE_URL: databaseFile, SHARED_DATA_DIR: SHARED_DATA_WITHOUT_RENTHOP, LOG_LEVEL: 'silent' },
    });
    // A listing of the site the mirror does not hold (taken out of it behind the service's back), its details refused.
    const db = new Database(databaseFile);
    const { id } = db.prepare("select id from listings where status = 'ACTIVE' limit 1").get() as { id: string };
    for (const table of ['listing_amenities', 'price_history']) db.prepare(`delete from ${table} where listing_id = ?`).run(id);
    db.prepare('delete from listings where id = ?').run(id);
    db.close();
    const faults = (body: Record<string, unknown>) =>
      request(`${adminUrl}/faults`, { method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    await faults({ errorRate: 1, on: 'details' });
    try {
      const answer = await request(`${base}/v1/property/${id}`, { headers: { authorization: `Bearer ${stdout.trim()}` } });
      expect({ status: answer.statusCode, code: ((await answer.body.json()) as { code: string }).code }).toEqual({
        status: 502,
        code: 'UPSTREAM_ERROR',
      });
    } finally {
      await faults({ errorRate: 0 });
    }
  }, 60_000);

  it("scrapes both threads' metrics at once: the API thread's requests, the background thread's syncs, the process once", async () => {
    const text = await (await request(metricsUrl)).body.text();
    const samples = (name: string) => text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
    // Counted in the API thread.
    expect(samples('nyc_listings_http_requests_total').some((l) => l.includes('route="/v1/search/rentals"'))).toBe(true);
    // Counted in the background thread: one success for each listing scope of the first sync.
    const syncs = samples('nyc_listings_sync_duration_seconds_count').filter((l) => /scope="(rental|sale):\d+",outcome="success"/.test(l));
    expect(syncs).toHaveLength(10);
    expect(syncs.every((l) => l.endsWith(' 1'))).toBe(true);
    // Process metrics once, from the API thread: two threads summed would count the process twice.
    expect(samples('process_cpu_seconds_total')).toHaveLength(1);
    expect(text.match(/^# TYPE nyc_listings_http_requests_total /gm)).toHaveLength(1);
    // Each thread's heap under its own name, read by that thread: two isolates, neither of them empty.
    const heap = samples('nyc_listings_thread_heap_bytes').sort();
    expect(heap.map((l) => l.slice(0, l.lastIndexOf(' ')))).toEqual([
      'nyc_listings_thread_heap_bytes{thread="background",state="total"}',
      'nyc_listings_thread_heap_bytes{thread="background",state="used"}',
      'nyc_listings_thread_heap_bytes{thread="main",state="total"}',
      'nyc_listings_thread_heap_bytes{thread="main",state="used"}',
    ]);
    expect(heap.every((l) => Number(l.slice(l.lastIndexOf(' ') + 1)) > 1 << 20)).toBe(true);
  });

  it('SIGTERM stops the background thread and the process', async () => {
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.lines.some((l) => l.includes('shutting down'))).toBe(true);
  });
});
