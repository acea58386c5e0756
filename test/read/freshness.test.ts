import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// The service's clock is under the test's control; the local upstream is real, on loopback.
let rt: TestRuntime;
let key: string;
let now = Date.now();
const HOUR = 3_600_000;

beforeAll(async () => {
  // Mechanics, not figures: the site data without the RentHop rentals, whose scopes refresh in a fraction of the time.
  rt = await startTestRuntime({ UPSTREAM_TIMEOUT_SECONDS: '3' }, { clock: () => new Date(now), withoutRentHop: true });
  key = await rt.key('business');
});
afterAll(async () => rt.close());

async function scopeSuccess(scope: string) {
  return (await rt.scopes.get(scope))!.last_success_at!;
}

describe('the freshness table, row by row', () => {
  it('stored and within the threshold: cached, no refresh', async () => {
    const res = await get(rt.app, '/v1/search/rentals?areas=300&perPage=1', key);
    expect(res.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false, freshnessThreshold: 3600 });
    expect(res.body.meta.dataAge).toBe(new Date(await scopeSuccess('rental:300')).toISOString());
    expect(rt.coordinator.isRunning('rental:300')).toBe(false);
  });

  it('exactly at the threshold the data is still cached; one millisecond past it, stale', async () => {
    const confirmed = Date.parse(await scopeSuccess('rental:300'));
    now = confirmed + 3600 * 1000;
    const at = await get(rt.app, '/v1/search/rentals?areas=300&perPage=1', key);
    expect(at.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false });
    now = confirmed + 3600 * 1000 + 1;
    const past = await get(rt.app, '/v1/search/rentals?areas=300&perPage=1', key);
    expect(past.body.meta).toMatchObject({ source: 'stale', refreshTriggered: true });
    await rt.coordinator.idle();
  });

  it('stored, older than the threshold: 50 simultaneous requests start exactly one refresh; stale once, refreshing after', async () => {
    const before = await scopeSuccess('rental:400');
    now += 2 * HOUR;
    const upstreamBefore = rt.upstream!.requestCount();
    // The upstream holds the refresh until all 50 are answered: on a busy machine it could otherwise finish first.
    const release = rt.upstream!.pause();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        rt.app.inject({ url: '/v1/search/rentals?areas=400&perPage=1', headers: { authorization: `Bearer ${key}` } }),
      ),
    );
    release();
    const metas = answers.map((a) => JSON.parse(a.body).meta);
    expect(metas.filter((m) => m.source === 'stale' && m.refreshTriggered).length).toBe(1);
    expect(metas.filter((m) => m.source === 'refreshing' && !m.refreshTriggered).length).toBe(49);
    expect(new Set(metas.map((m) => m.dataAge))).toEqual(new Set([new Date(before).toISOString()]));
    await rt.coordinator.idle();
    expect(rt.upstream!.requestCount() - upstreamBefore).toBe(1); // Bronx rentals fit one page of 500
    const after = await get(rt.app, '/v1/search/rentals?areas=400&perPage=1', key);
    expect(after.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false, dataAge: new Date(now).toISOString() });
  });

  it('a search over several boroughs is as old as its oldest scope', async () => {
    const res = await get(rt.app, '/v1/search/rentals?areas=300,100&perPage=1', key);
    expect(res.body.meta.source).toBe('stale');
    expect(res.body.meta.dataAge).toBe(new Date(await scopeSuccess('rental:100')).toISOString());
    await rt.coordinator.idle();
    expect((await get(rt.app, '/v1/search/rentals?areas=300,100&perPage=1', key)).body.meta.source).toBe('cached');
  });

  it('a single listing not stored is fetched from upstream now: cached, refreshTriggered', async () => {
    await rt.store.db.deleteFrom('listings').where('id', '=', '1545').execute();
    const res = await get(rt.app, '/v1/property/1545', key);
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ source: 'cached', refreshTriggered: true, dataAge: new Date(now).toISOString() });
    expect(res.body.data).toMatchObject({ id: '1545', price: 2550, buildingId: '44518357' });
    const again = await get(rt.app, '/v1/property/1545', key);
    expect(again.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false });
  });

  it('a stored listing past the property threshold is served stale and refreshed in the background', async () => {
    now += 2 * HOUR;
    const res = await get(rt.app, '/v1/property/1545', key);
    expect(res.body.meta).toMatchObject({ source: 'stale', refreshTriggered: true });
    expect((await get(rt.app, '/v1/property/1545', key)).body.meta.source).toBe('refreshing');
    await rt.coordinator.idle();
    expect((await get(rt.app, '/v1/property/1545', key)).body.meta).toMatchObject({
      source: 'cached',
      dataAge: new Date(now).toISOString(),
    });
  });

  it('a listing the upstream does not have is 404; a building is fetched once, then cached', async () => {
    const missing = await get(rt.app, '/v1/property/777777777', key);
    expect(missing.status).toBe(404);
    // Hydration stored the building with its listings: forget it, so it is fetched through a listing of it.
    await rt.store.db.deleteFrom('buildings').where('id', '=', '44518357').execute();
    const first = await get(rt.app, '/v1/building/44518357', key);
    expect(first.body.meta).toMatchObject({ source: 'cached', refreshTriggered: true, freshnessThreshold: 86400 });
    expect(first.body.data.rentalInventory.activeCount).toBeGreaterThan(0);
    const second = await get(rt.app, '/v1/building/44518357', key);
    expect(second.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false });
  });

  it('areas follow the same rule with their own threshold', async () => {
    const res = await get(rt.app, '/v1/areas?level=0', key);
    expect(res.body.meta).toMatchObject({ source: 'cached', freshnessThreshold: 604800 });
    expect(res.body.data.map((a: { id: number }) => a.id)).toEqual([100, 200, 300, 400, 500]);
    now += 8 * 24 * HOUR;
    expect((await get(rt.app, '/v1/areas?level=0', key)).body.meta).toMatchObject({ source: 'stale', refreshTriggered: true });
    await rt.coordinator.idle();
    expect((await get(rt.app, '/v1/areas?level=0', key)).body.meta.source).toBe('cached');
  });
  it('a single resource not stored while upstream fails: 502, or 504 on a timeout', async () => {
    // Last in this file: the failures below open the circuit breaker.
    rt.upstream!.faults.hangRate = 1;
    const hung = await get(rt.app, '/v1/property/1234567891', key);
    expect(hung.status).toBe(504);
    expect(hung.body.code).toBe('UPSTREAM_TIMEOUT');
    rt.upstream!.faults.hangRate = 0;
    rt.upstream!.faults.errorRate = 1;
    const failed = await get(rt.app, '/v1/property/1234567890', key);
    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe('UPSTREAM_ERROR');
    expect((await get(rt.app, '/v1/property/8000002', key)).status).toBe(200); // stored: still answers
    rt.upstream!.faults.errorRate = 0;
  });
});
