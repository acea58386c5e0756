import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// A seeded market clock moves the local upstream's market; the mirror must end up equal to it. The market
// is the real site data without the RentHop rentals: whole syncs of the city again and again would take minutes.
let rt: TestRuntime;
let key: string;
let now = Date.now();
const DAY = 86_400_000;
let initialPrice: Map<string, number>;
let firstSynced: Set<string>;

beforeAll(async () => {
  rt = await startTestRuntime({}, { clock: () => new Date(now), manualMarketClock: true, fresh: true, withoutRentHop: true });
  key = await rt.key('business');
  initialPrice = new Map(rt.siteData.listings.map((l) => [l.node.id, l.node.price]));
});
afterAll(async () => rt.close());

describe('a refresh over a moving market', () => {
  it('the first sync mirrors exactly what the upstream lists (held-back listings are not yet listed)', async () => {
    const upcoming = rt.marketClock!.upcoming;
    expect(upcoming).toBeGreaterThan(50);
    // Held back, or in contract (an active search never finds those): the rest is mirrored.
    const active = rt.siteData.listings.filter((l) => l.node.status === 'ACTIVE').length;
    expect(active).toBe(rt.siteData.listings.filter((l) => l.node.status !== 'IN_CONTRACT').length - upcoming);
    expect(await rt.listings.count()).toBe(active);
    firstSynced = new Set((await rt.store.db.selectFrom('listings').select('id').execute()).map((r) => r.id));
  });

  it('after 3 simulated days a full refresh shows new listings, price changes and delistings', async () => {
    now += 3 * DAY;
    rt.marketClock!.advance(3 * DAY);
    const failed = await rt.syncer.syncAll();
    expect(failed).toEqual([]);
    const events = rt.marketClock!.events;
    const listed = events.filter((e) => e.event === 'LISTED');
    const delisted = new Set(events.filter((e) => e.event === 'DELISTED').map((e) => e.id));
    const repriced = new Set(events.filter((e) => e.event.startsWith('PRICE')).map((e) => e.id));
    // Realistic daily rates: about 2 % of 9,000 listings a day for each kind of change.
    expect(listed.length).toBeGreaterThan(300);
    expect(
      listed.some((e) => delisted.has(e.id) && events.findIndex((x) => x.id === e.id && x.event === 'DELISTED') < events.indexOf(e)),
    ).toBe(true);
    expect(delisted.size).toBeGreaterThan(300);
    expect(repriced.size).toBeGreaterThan(300);

    // Equal to what the local upstream reports: every listing's status and price.
    const upstreamActive = rt.siteData.listings.filter((l) => l.node.status === 'ACTIVE');
    expect(await rt.listings.count()).toBe(upstreamActive.length);
    const rows = await rt.store.db.selectFrom('listings').select(['id', 'status', 'price']).execute();
    const mirror = new Map(rows.map((r) => [r.id, r]));
    for (const l of rt.siteData.listings) {
      if (l.node.status === 'UPCOMING' || l.node.status === 'IN_CONTRACT') {
        expect(mirror.has(l.node.id)).toBe(false);
        continue;
      }
      const row = mirror.get(l.node.id);
      if (!row) {
        // Listed and delisted again between the two syncs: the mirror never saw it on the market.
        expect(l.node.status).toBe('OFF_MARKET');
        expect(listed.some((e) => e.id === l.node.id)).toBe(true);
        continue;
      }
      if (l.node.status === 'ACTIVE') expect(Number(row.price), l.node.id).toBe(l.node.price);
      expect(row.status, l.node.id).toBe(l.node.status);
    }

    // Price history: one event per listing active at both syncs whose price moved between them, with its percentage.
    const history = await rt.store.db
      .selectFrom('price_history')
      .selectAll()
      .where('event', 'in', ['PRICE_INCREASE', 'PRICE_DECREASE'])
      .execute();
    const expected = rt.siteData.listings.filter(
      (l) => l.node.status === 'ACTIVE' && firstSynced.has(l.node.id) && initialPrice.get(l.node.id) !== l.node.price,
    );
    expect(history.length).toBe(expected.length);
    for (const h of history) {
      const before = initialPrice.get(h.listing_id)!;
      const after = Number(h.price);
      expect(h.event).toBe(after > before ? 'PRICE_INCREASE' : 'PRICE_DECREASE');
      expect(Math.abs(h.pct_change! - ((after - before) / before) * 100)).toBeLessThanOrEqual(0.005 + 1e-9); // stored to 2 decimals
    }
  });

  it('a delisted listing leaves search results but still answers by id, with its status and history', async () => {
    const offMarket = new Set(rt.siteData.listings.filter((l) => l.node.status === 'OFF_MARKET').map((l) => l.node.id));
    const gone = rt.marketClock!.events.find(
      (e) => e.event === 'DELISTED' && e.kind === 'rental' && offMarket.has(e.id) && firstSynced.has(e.id),
    )!;
    const res = await get(rt.app, `/v1/property/${gone.id}`, key);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('OFF_MARKET');
    expect(res.body.data.priceHistory.map((e: { event: string }) => e.event)).toEqual(['LISTED', 'DELISTED']);
    const url = `/v1/search/rentals?minPrice=${res.body.data.price}&maxPrice=${res.body.data.price}&perPage=500`;
    const search = await get(rt.app, url, key);
    expect(search.body.data.map((i: { id: string }) => i.id)).not.toContain(gone.id);
  });

  it('a new listing appears with a LISTED event dated the day the market listed it', async () => {
    const fresh = rt.marketClock!.events.find(
      (e) => e.event === 'LISTED' && !rt.marketClock!.events.some((x) => x.id === e.id && x.event === 'DELISTED'),
    )!;
    const res = await get(rt.app, `/v1/property/${fresh.id}`, key);
    expect(res.body.data.status).toBe('ACTIVE');
    expect(res.body.data.listedAt).toBe(fresh.at);
    expect(res.body.data.priceHistory[0]).toMatchObject({ event: 'LISTED', date: fresh.at.slice(0, 10) });
  });

  it('a crawl that would take more than half of a scope off the market does not sweep', async () => {
    const activeQueens = async () =>
      (
        await rt.store.db
          .selectFrom('listings')
          .select('id')
          .where('kind', '=', 'rental')
          .where('borough_id', '=', 300)
          .where('status', '=', 'ACTIVE')
          .orderBy('id')
          .execute()
      ).map((r) => r.id);
    const ids = await activeQueens();
    const upstream = new Map(rt.siteData.listings.filter((l) => l.kind === 'rental').map((l) => [l.node.id, l]));
    // 10 % gone upstream: an ordinary crawl, swept.
    const few = ids.slice(0, Math.floor(ids.length * 0.1));
    for (const id of few) upstream.get(id)!.node.status = 'OFF_MARKET';
    expect((await rt.syncer.syncScope('rental', 300)).delisted).toBe(few.length);
    // 60 % of the rest gone at once looks like a truncated answer: stored, not swept.
    const rest = await activeQueens();
    for (const id of rest.slice(0, Math.ceil(rest.length * 0.6))) upstream.get(id)!.node.status = 'OFF_MARKET';
    expect((await rt.syncer.syncScope('rental', 300)).delisted).toBe(0);
    expect(await activeQueens()).toEqual(rest);
  });
});
