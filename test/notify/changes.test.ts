import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { expectProblem, get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';

// The change feed against the mirror's own before/after: a market day through the local upstream's
// admin port, a sync, and every change exactly once in a cursor walk.
const runtime = useRuntimesPerTest({ withoutRentHop: true });

describe('the change feed', () => {
  it('after a market day and a sync, the events equal the diff of the mirror, each once, in cursor order', async () => {
    let now = Date.now();
    const rt = await runtime({}, { clock: () => new Date(now), manualMarketClock: true });
    const key = await rt.key('business');
    const state = async () =>
      new Map(
        (await rt.store.db.selectFrom('listings').select(['id', 'status', 'price']).execute()).map((r) => [
          r.id,
          { status: r.status, price: Number(r.price) },
        ]),
      );
    const walk = async (since: string) => {
      const events: any[] = [];
      let cursor = since;
      for (;;) {
        const page = await get(rt.app, `/v1/changes?since=${cursor}&perPage=500`, key);
        expect(page.status).toBe(200);
        events.push(...page.body.data);
        if (!page.body.data.length) return { events, cursor };
        cursor = page.body.meta.next;
      }
    };
    const start = (await walk('0')).cursor;
    const before = await state();
    const advanced = await request(`${rt.upstream!.adminUrl}/market/advance?hours=24`, { method: 'POST' });
    expect(advanced.statusCode).toBe(200);
    await advanced.body.dump();
    now += 24 * 3_600_000;
    expect(await rt.syncer.syncAll()).toEqual([]);
    const after = await state();
    const expected = new Map<string, string>();
    for (const [id, a] of after) {
      const b = before.get(id);
      if (!b) expected.set(id, 'listing.listed');
      else if (b.status !== a.status) expected.set(id, 'listing.status_changed');
      else if (b.price !== a.price) expected.set(id, 'listing.price_changed');
    }
    expect(expected.size).toBeGreaterThan(100);
    const { events } = await walk(start);
    expect(events.map((e) => Number(e.id))).toEqual([...events.map((e) => Number(e.id))].sort((a, b) => a - b));
    expect(new Map(events.map((e) => [e.listingId, e.type]))).toEqual(expected);
    expect(events.length).toBe(expected.size); // each change once
    for (const e of events) {
      const a = after.get(e.listingId)!;
      expect(e.listing).toMatchObject({ id: e.listingId, price: a.price, status: a.status });
      if (e.type === 'listing.price_changed') {
        const b = before.get(e.listingId)!;
        expect(e).toMatchObject({
          oldPrice: b.price,
          newPrice: a.price,
          pctChange: Math.round(((a.price - b.price) / b.price) * 10000) / 100,
        });
      }
      if (e.type === 'listing.status_changed') expect(e).toMatchObject({ fromStatus: before.get(e.listingId)!.status, toStatus: a.status });
    }
    const counts = Object.fromEntries(
      ['listing.listed', 'listing.price_changed', 'listing.status_changed'].map((t) => [t, events.filter((e) => e.type === t).length]),
    );
    console.log(
      `a market day as a feed: ${events.length} events ${JSON.stringify(counts)}; first: ${JSON.stringify(events.find((e) => e.type === 'listing.price_changed'))?.slice(0, 400)}`,
    );
    const onlyRentalPrices = await get(rt.app, `/v1/changes?since=${start}&types=listing.price_changed&kind=rental&perPage=500`, key);
    expect(onlyRentalPrices.body.data.every((e: any) => e.type === 'listing.price_changed' && e.kind === 'rental')).toBe(true);
  }, 120_000);

  it('since=latest starts a new consumer at the newest event; a cursor beyond it is a 400', async () => {
    let now = Date.now();
    const rt = await runtime({}, { clock: () => new Date(now), manualMarketClock: true });
    const key = await rt.key('business');
    const head = await rt.changes.latestId();
    expect(head).toBeGreaterThan(1000);
    const latest = await get(rt.app, '/v1/changes?since=latest', key);
    expect(latest.body.data).toEqual([]);
    expect(latest.body.meta.next).toBe(String(head));
    rt.marketClock!.advance(24 * 3_600_000);
    now += 24 * 3_600_000;
    await rt.syncer.syncScope('rental', 100);
    const next = await get(rt.app, `/v1/changes?since=${latest.body.meta.next}&perPage=500`, key);
    expect(next.body.data.length).toBeGreaterThan(0);
    expect(Number(next.body.data[0].id)).toBe(head + 1);
    const beyond = await expectProblem(rt.app, `/v1/changes?since=${(await rt.changes.latestId()) + 1}`, 400, 'INVALID_PARAMS', key);
    expect(beyond.errors[0]).toMatchObject({ name: 'since' });
    await expectProblem(rt.app, '/v1/changes?since=999999999', 400, 'INVALID_PARAMS', key);
  });

  it('a cursor older than the retention is 410 CURSOR_EXPIRED', async () => {
    let now = Date.now();
    const rt = await runtime({ CHANGES_RETENTION_DAYS: '1' }, { clock: () => new Date(now), manualMarketClock: true });
    const key = await rt.key('pro');
    rt.marketClock!.advance(24 * 3_600_000);
    now += 24 * 3_600_000;
    await rt.syncer.syncScope('rental', 300);
    const first = (await get(rt.app, '/v1/changes?since=0&perPage=1', key)).body;
    expect(first.data.length).toBe(1);
    now += 3 * 24 * 3_600_000;
    rt.marketClock!.advance(3 * 24 * 3_600_000);
    await rt.syncer.syncScope('rental', 300);
    await expectProblem(rt.app, `/v1/changes?since=${first.meta.next}`, 410, 'CURSOR_EXPIRED', key);
    expect((await get(rt.app, '/v1/changes?since=0', key)).status).toBe(200);
  }, 120_000);

  it('a building the site now describes differently is a building.updated event with the fields that changed', async () => {
    const rt = await runtime();
    const key = await rt.key('pro');
    const stored = await rt.store.db.selectFrom('buildings').select(['id', 'data']).orderBy('id').limit(1).executeTakeFirstOrThrow();
    const local = rt.siteData.buildings.find((b) => b.id === stored.id)!;
    expect(local).toBeDefined();
    const start = await rt.changes.latestId();
    const refresh = async () => {
      // Stale, so the read refreshes it from the site in the background.
      await rt.store.db.updateTable('buildings').set({ fetched_at: '2000-01-01T00:00:00.000Z' }).where('id', '=', stored.id).execute();
      const read = await get(rt.app, `/v1/building/${stored.id}`, key);
      expect(read.body.meta).toMatchObject({ source: 'stale', refreshTriggered: true });
      await rt.coordinator.idle();
    };
    await refresh();
    expect(
      (await get(rt.app, `/v1/changes?since=${start}&types=building.updated`, key)).body.data.map((e: any) => e.changedFields),
    ).toEqual([]); // the same building: no event
    local.unitCount = (local.unitCount ?? 0) + 7;
    await refresh();
    const events = (await get(rt.app, `/v1/changes?since=${start}`, key)).body.data;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'building.updated',
      listingId: null,
      kind: null,
      buildingId: stored.id,
      changedFields: ['unitCount'],
      building: { id: stored.id, unitCount: local.unitCount },
    });
    expect((await get(rt.app, `/v1/building/${stored.id}`, key)).body.data.unitCount).toBe(local.unitCount);
    // Listing filters keep listing events only.
    expect((await get(rt.app, `/v1/changes?since=${start}&kind=rental`, key)).body.data).toEqual([]);
  }, 60_000);
});
