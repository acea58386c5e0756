import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';
import { stagedRows, storedListings } from '../helpers/stored-listings.js';
import { waitFor } from '../helpers/wait.js';

// Faults injected into the real local upstream; the market moves between refreshes so that a
// refresh that wrongly applied anything would show.
let rt: TestRuntime;
let key: string;
let now = Date.now();
const HOUR = 3_600_000;
let served = 0;
let nonOk = 0;

beforeAll(async () => {
  rt = await startTestRuntime(
    {
      UPSTREAM_TIMEOUT_SECONDS: '2',
      UPSTREAM_BREAKER_HALF_OPEN_SECONDS: '0.5',
      UPSTREAM_MAX_ATTEMPTS: '2',
      UPSTREAM_BLOCK_BACKOFF_SECONDS: '0.5',
    },
    { clock: () => new Date(now), manualMarketClock: true, withoutRentHop: true },
  );
  key = await rt.key('business');
});
afterAll(async () => rt.close());

/** Everything stored about listings: a change anywhere shows. */
const snapshot = () => storedListings(rt.store.db);

/** Waits until the upstream may be asked again: the breaker half-open or closed, no bot block being waited out. */
async function breakerReady() {
  await waitFor(async () => {
    const { upstream } = (await get(rt.app, '/v1/health')).body;
    return upstream.circuit !== 'open' && upstream.blockedUntil === null;
  }, 'the upstream circuit to half-open and any bot block to be waited out');
}

/** Moves both clocks on, so every scope is stale and the market has changed. */
function moveOn() {
  now += 2 * HOUR;
  rt.marketClock!.advance(2 * HOUR);
}

async function searchBurst(url: string, times = 10) {
  for (let i = 0; i < times; i++) {
    const res = await get(rt.app, url, key);
    served++;
    if (res.status !== 200) nonOk++;
    expect(res.status).toBe(200);
    expect(['stale', 'refreshing']).toContain(res.body.meta.source);
  }
}

const SCENARIOS: [string, Record<string, number>, RegExp][] = [
  ['upstream down (503)', { errorRate: 1 }, /HTTP 503|circuit/],
  ['403 bot block', { blockRate: 1 }, /403|bot block|circuit/],
  ['malformed body', { malformedRate: 1 }, /not JSON|circuit/],
  ['hanging connection', { hangRate: 1 }, /timed out|circuit/],
  ['slow past the timeout', { latencyMs: 4000 }, /timed out|circuit/],
];

describe('upstream faults: reads keep answering from the store, nothing stored is lost or changed', () => {
  it.each(SCENARIOS)('%s', async (_name, faults, expectedError) => {
    await breakerReady();
    moveOn();
    const before = await snapshot();
    Object.assign(rt.upstream!.faults, faults);
    await searchBurst('/v1/search/rentals?perPage=5');
    await searchBurst('/v1/search/sales?areas=100&perPage=5');
    await rt.coordinator.idle();
    expect(await snapshot()).toEqual(before);
    const health = await get(rt.app, '/v1/health');
    const scope = health.body.scopes.find((s: { scope: string }) => s.scope === 'rental:300');
    expect(scope.lastError).toMatch(expectedError);
    Object.assign(rt.upstream!.faults, { errorRate: 0, blockRate: 0, malformedRate: 0, hangRate: 0, latencyMs: 0 });
  });

  it('the breaker opens while upstream fails and shows in /v1/health', async () => {
    await breakerReady();
    rt.upstream!.faults.errorRate = 1;
    // Keep failing refreshes coming until health has shown the breaker open (it half-opens again soon).
    let seen: any = null;
    for (let i = 0; i < 50 && !seen; i++) {
      moveOn();
      await searchBurst('/v1/search/rentals?perPage=1', 1);
      await rt.coordinator.idle();
      const health = await get(rt.app, '/v1/health');
      if (health.body.upstream.circuit === 'open') seen = health.body;
    }
    expect(seen).toMatchObject({ status: 'degraded', upstream: { circuit: 'open' } });
    rt.upstream!.faults.errorRate = 0;
  });

  it('an upstream dying halfway through a crawl changes nothing; the next healthy refresh catches up', async () => {
    moveOn();
    const before = await snapshot();
    await breakerReady();
    rt.upstream!.faults.failAfter = rt.upstream!.requestCount() + 5; // Manhattan sales take more (over the cap: counts and parts)
    await expect(rt.syncer.syncScope('sale', 100)).rejects.toThrow();
    expect(await snapshot()).toEqual(before);
    // The pages it had staged went with it (store/crawl-staging.ts).
    expect(await stagedRows(rt.store.db)).toBe(0);
    rt.upstream!.faults.failAfter = 0;
    await breakerReady();

    const failed = await rt.syncer.syncAll();
    expect(failed).toEqual([]);
    const active = rt.siteData.listings.filter((l) => l.node.status === 'ACTIVE');
    expect(await rt.listings.count()).toBe(active.length);
    const prices = new Map(
      (await rt.store.db.selectFrom('listings').select(['id', 'price']).where('status', '=', 'ACTIVE').execute()).map((r) => [
        r.id,
        Number(r.price),
      ]),
    );
    for (const l of active) expect(prices.get(l.node.id)).toBe(l.node.price);
    const health = await get(rt.app, '/v1/health');
    expect(health.body.upstream.circuit).toBe('closed');
    expect(
      health.body.scopes.every(
        (s: { lastError: string | null; lastErrorAt: string | null; lastSuccessAt: string }) =>
          !s.lastErrorAt || s.lastSuccessAt >= s.lastErrorAt,
      ),
    ).toBe(true);
    const res = await get(rt.app, '/v1/search/sales?areas=100&perPage=1', key);
    expect(res.body.meta.source).toBe('cached');
  });

  it('served every read during the faults', () => {
    expect(served).toBeGreaterThan(100);
    expect(nonOk).toBe(0);
    console.log(`fault run: ${served} reads served during upstream faults, ${nonOk} failed, 0 stored listings lost or changed`);
  });
});
