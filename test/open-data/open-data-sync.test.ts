import { describe, expect, it } from 'vitest';
import type { SodaRow } from '../../src/domain/city-records.js';
import { DATASETS } from '../../src/upstream/soda-client.js';
import { RECORDED_SALES_SCOPE } from '../../src/store/scopes-repository.js';
import { get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';

/**
 * The sync of NYC Open Data through the SODA client and the local emulator, on a store without open data
 * (the template without RentHop), over a small part of the recorded sales so that each sync is quick.
 */
/** A query parameter of a request the emulator recorded (`/resource/<id>.json?...`). */
const param = (request: string, name: string) => new URLSearchParams(request.slice(request.indexOf('?') + 1)).get(name);

describe('open data sync', () => {
  const start = useRuntimesPerTest({ withoutRentHop: true });

  /** A runtime whose emulator serves only Staten Island's 2016-2017 sales (and no tax lots); returns the rows it holds back. */
  async function statenIslandOnly(env: Record<string, string> = {}, clock?: () => Date) {
    const rt = await start({ OPEN_DATA_PAGE_SIZE: '1000', ...env }, clock ? { clock } : {});
    const sales = await rt.soda!.rows(DATASETS.recordedSales);
    const later = sales.filter((r) => r.borough === '5' && r.sale_date >= '2023-04-01' && r.sale_date < '2023-05-01');
    const kept = sales.filter((r) => r.borough === '5' && r.sale_date < '2018-01-01');
    sales.splice(0, sales.length, ...kept);
    (await rt.soda!.rows(DATASETS.taxLots)).splice(0);
    return { rt, kept, later };
  }

  it('reads every row page by page, then only the rows published since: an added month adds exactly its rows', async () => {
    const { rt, kept, later } = await statenIslandOnly();
    expect(await rt.openData.syncRecordedSales()).toBe(true);
    expect(await rt.cityRecords.count('recorded_sales')).toBe(kept.length);
    const firstRequests = rt.soda!.requests.filter((r) => r.includes(DATASETS.recordedSales));
    expect(firstRequests).toHaveLength(Math.floor(kept.length / 1000) + 1);
    for (const r of firstRequests) expect(param(r, '$order')).toBe(':updated_at, :id');
    const before = new Map((await rt.store.db.selectFrom('recorded_sales').selectAll().execute()).map((r) => [r.id, r]));

    // The city publishes a month: its rows come with a later :updated_at.
    const published: SodaRow[] = later.map((r) => ({ ...r, ':updated_at': '2024-05-12T00:00:00.000Z' }));
    (await rt.soda!.rows(DATASETS.recordedSales)).push(...published);
    rt.soda!.requests.length = 0;
    expect(await rt.openData.syncRecordedSales()).toBe(true);
    const after = await rt.store.db.selectFrom('recorded_sales').selectAll().execute();
    expect(after.length).toBe(kept.length + published.length);
    const added = after.filter((r) => !before.has(r.id));
    expect(added.map((r) => r.id).sort()).toEqual(published.map((r) => r[':id']).sort());
    for (const r of after) if (before.has(r.id)) expect(r).toEqual(before.get(r.id));
    const asked = rt.soda!.requests;
    expect(asked.length).toBe(Math.floor(published.length / 1000) + 1);
    expect(param(asked[0], '$where')).toBe(":updated_at > '2017-09-22T00:00:00.000Z'");

    // Nothing new: one request, nothing written.
    rt.soda!.requests.length = 0;
    expect(await rt.openData.syncRecordedSales()).toBe(true);
    expect(rt.soda!.requests).toHaveLength(1);
    expect(await rt.cityRecords.count('recorded_sales')).toBe(after.length);
  });

  it('an upstream failure keeps every stored row, is reported in /v1/health, and stored sales are still answered', async () => {
    const { rt, kept } = await statenIslandOnly({ UPSTREAM_MAX_ATTEMPTS: '1', UPSTREAM_BREAKER_THRESHOLD: '100' });
    expect(await rt.openData.syncRecordedSales()).toBe(true);
    const stored = await rt.store.db.selectFrom('recorded_sales').selectAll().orderBy('id').execute();
    (await rt.soda!.rows(DATASETS.recordedSales)).push(
      ...kept.slice(0, 5).map((r) => ({ ...r, ':id': `${r[':id']}-x`, ':updated_at': '2024-05-12T00:00:00.000Z' })),
    );
    rt.soda!.failWith(503);
    expect(await rt.openData.syncRecordedSales()).toBe(false);
    expect(await rt.store.db.selectFrom('recorded_sales').selectAll().orderBy('id').execute()).toEqual(stored);
    const key = await rt.key('pro');
    const health = await get(rt.app, '/v1/health');
    const scope = health.body.scopes.find((s: any) => s.scope === RECORDED_SALES_SCOPE);
    expect(scope).toMatchObject({ failing: true });
    expect(scope.lastError).toMatch(/503/);
    expect(health.body.status).toBe('degraded');
    const answer = await get(rt.app, '/v1/recorded-sales?perPage=1', key);
    expect(answer.status).toBe(200);
    expect(answer.body.meta.total).toBe(kept.length);
    // SODA answers again: the next sync reads what it missed.
    rt.soda!.failWith(null);
    expect(await rt.openData.syncRecordedSales()).toBe(true);
    expect(await rt.cityRecords.count('recorded_sales')).toBe(kept.length + 5);
  });

  it('the breaker opens after consecutive failures: no request reaches SODA, stale data is served as stale and no refresh starts', async () => {
    let now = new Date();
    const { rt, kept } = await statenIslandOnly(
      {
        UPSTREAM_MAX_ATTEMPTS: '1',
        UPSTREAM_BREAKER_THRESHOLD: '2',
        UPSTREAM_BREAKER_HALF_OPEN_SECONDS: '3600',
        OPEN_DATA_FRESHNESS_SECONDS: '60',
      },
      () => now,
    );
    expect(await rt.openData.syncRecordedSales()).toBe(true);
    rt.soda!.failWith(500);
    expect(await rt.openData.syncRecordedSales()).toBe(false);
    expect(await rt.openData.syncRecordedSales()).toBe(false);
    expect(rt.openData.canRefresh()).toBe(false);
    const asked = rt.soda!.requests.length;
    expect(await rt.openData.syncRecordedSales()).toBe(false);
    expect(rt.soda!.requests.length).toBe(asked);
    expect((await rt.scopes.get(RECORDED_SALES_SCOPE))!.last_error).toMatch(/circuit/);
    now = new Date(now.getTime() + 120_000);
    const key = await rt.key('pro');
    const answer = await get(rt.app, '/v1/recorded-sales?perPage=1', key);
    expect(answer.body.meta).toMatchObject({ source: 'stale', refreshTriggered: false, freshnessThreshold: 60, total: kept.length });
    expect(rt.soda!.requests.length).toBe(asked);
  });

  it('a stale answer starts one background sync, and the next answer is fresh', async () => {
    let now = new Date();
    const { rt, kept } = await statenIslandOnly({ OPEN_DATA_FRESHNESS_SECONDS: '60' }, () => now);
    expect(await rt.openData.syncAll()).toEqual([]);
    now = new Date(now.getTime() + 120_000);
    const key = await rt.key('pro');
    const stale = await get(rt.app, '/v1/recorded-sales?perPage=1', key);
    expect(stale.body.meta).toMatchObject({ source: 'stale', refreshTriggered: true, total: kept.length });
    await rt.coordinator.idle();
    const fresh = await get(rt.app, '/v1/recorded-sales?perPage=1', key);
    expect(fresh.body.meta).toMatchObject({ source: 'cached', refreshTriggered: false, dataAge: now.toISOString() });
  });
});
