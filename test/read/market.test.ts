import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectProblem, get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';

// Market figures against the source rows (market clock off), and history that grows day by day.
const runtime = useRuntimesPerTest();
const DAY = 86_400_000;

/** Type-7 quantile, written here: linear between the closest ranks. */
function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const p = (s.length - 1) * q;
  const lo = Math.floor(p);
  return s[lo] + (s[Math.ceil(p)] - s[lo]) * (p - lo);
}
const cents = (v: number) => Math.round(v * 100) / 100;

describe('market figures', () => {
  it('Brooklyn one-bedroom rentals: count, median, quartiles, price per square foot and days on market equal the source rows', async () => {
    const rt = await runtime();
    const key = await rt.key('starter');
    const rows = rentalRows().filter((r) => r.borough === 'Brooklyn' && Math.floor(Number(r.bedrooms)) === 1);
    const prices = rows.map((r) => Number(r.rent));
    const perSqft = rows.filter((r) => Number(r.size_sqft) > 0).map((r) => Math.round((Number(r.rent) / Number(r.size_sqft)) * 100) / 100);
    const daysSinceBuild = Math.floor((Date.now() - rt.siteData.asOf.getTime()) / DAY);
    const dom = rows.map((r) => (Number(r.rental_id) % 60) + daysSinceBuild);
    const res = await get(rt.app, '/v1/market?kind=rental&areas=200&bedrooms=1', key);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      kind: 'rental',
      activeCount: rows.length,
      medianPrice: cents(quantile(prices, 0.5)),
      p25Price: cents(quantile(prices, 0.25)),
      p75Price: cents(quantile(prices, 0.75)),
      medianPricePerSqft: cents(quantile(perSqft, 0.5)),
      medianDaysOnMarket: cents(quantile(dom, 0.5)),
      byBedroom: [{ bedrooms: '1', activeCount: rows.length, medianPrice: cents(quantile(prices, 0.5)) }],
    });
    console.log(`market: Brooklyn 1-bedroom rentals ${JSON.stringify(res.body.data)}`);
    const all = (await get(rt.app, '/v1/market?kind=rental', key)).body.data;
    expect(all.activeCount).toBe(rentalRows().length);
    expect(all.byBedroom.reduce((n: number, b: { activeCount: number }) => n + b.activeCount, 0)).toBe(rentalRows().length);
    await expectProblem(rt.app, '/v1/market?kind=rental&areas=99999', 400, 'INVALID_PARAMS', key);
    await expectProblem(rt.app, '/v1/market?areas=200', 400, 'INVALID_PARAMS', key);
  });

  it('sales of every borough: count and median asking price of each bedroom count equal the source rows', async () => {
    const rt = await runtime();
    const key = await rt.key('starter');
    const BOROUGHS = { 100: 'Manhattan', 200: 'Brooklyn', 300: 'Queens', 400: 'Bronx', 500: 'Staten Island' } as const;
    for (const [id, borough] of Object.entries(BOROUGHS)) {
      const rows = saleRows().filter((r) => r.borough === borough);
      for (const bedrooms of [1, 2, 3, 4]) {
        const prices = rows.filter((r) => r.bedrooms === bedrooms).map((r) => r.price);
        expect(prices.length, `${borough} ${bedrooms}`).toBeGreaterThan(5);
        const res = await get(rt.app, `/v1/market?kind=sale&areas=${id}&bedrooms=${bedrooms}`, key);
        expect(res.body.data, `${borough} ${bedrooms}`).toMatchObject({
          activeCount: prices.length,
          medianPrice: cents(quantile(prices, 0.5)),
        });
      }
    }
  });

  it("for any boroughs and bedroom counts: every figure and each bedroom count's median equal the source rows", async () => {
    const rt = await runtime();
    const key = await rt.key('starter');
    const rentals = rentalRows();
    const daysSinceBuild = Math.floor((Date.now() - rt.siteData.asOf.getTime()) / DAY);
    const BOROUGHS = { 100: 'Manhattan', 200: 'Brooklyn', 300: 'Queens' } as const;
    const label = (bedrooms: number) => (bedrooms === 0 ? 'STUDIO' : String(bedrooms));
    const median = (values: number[]) => (values.length ? cents(quantile(values, 0.5)) : null);
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.subarray([100, 200, 300] as const, { minLength: 1 }), { nil: undefined }),
        fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 3 }), { nil: undefined }),
        async (boroughs, bedrooms) => {
          const rows = rentals.filter(
            (r) =>
              (!boroughs || boroughs.some((id) => BOROUGHS[id] === r.borough)) &&
              (!bedrooms || bedrooms.includes(Math.floor(Number(r.bedrooms)))),
          );
          const prices = rows.map((r) => Number(r.rent));
          const perSqft = rows
            .filter((r) => Number(r.size_sqft) > 0)
            .map((r) => Math.round((Number(r.rent) / Number(r.size_sqft)) * 100) / 100);
          const groups = [...new Set(rows.map((r) => Math.floor(Number(r.bedrooms))))].sort((a, b) => a - b);
          const query = [boroughs && `areas=${boroughs.join(',')}`, bedrooms && `bedrooms=${bedrooms.join(',')}`].filter(Boolean).join('&');
          const res = await get(rt.app, `/v1/market?kind=rental&${query}`, key);
          expect(res.status, query).toBe(200);
          expect(res.body.data, query).toEqual({
            kind: 'rental',
            activeCount: rows.length,
            medianPrice: median(prices),
            p25Price: prices.length ? cents(quantile(prices, 0.25)) : null,
            p75Price: prices.length ? cents(quantile(prices, 0.75)) : null,
            medianPricePerSqft: median(perSqft),
            medianDaysOnMarket: median(rows.map((r) => (Number(r.rental_id) % 60) + daysSinceBuild)),
            byBedroom: groups.map((b) => {
              const of = rows.filter((r) => Math.floor(Number(r.bedrooms)) === b).map((r) => Number(r.rent));
              return { bedrooms: label(b), activeCount: of.length, medianPrice: median(of) };
            }),
          });
        },
      ),
      { numRuns: 25, seed: 2016 },
    );
  });

  it('a listing with no known listing date counts among the active ones and not in days on market', async () => {
    const rt = await runtime();
    const key = await rt.key('starter');
    const rows = rentalRows().filter((r) => r.borough === 'Queens');
    const undated = rows.filter((r) => Number(r.rental_id) % 5 === 0);
    expect(undated.length).toBeGreaterThan(0);
    await rt.store.db
      .updateTable('listings')
      .set({ listed_at: null })
      .where(
        'id',
        'in',
        undated.map((r) => r.rental_id),
      )
      .execute();
    const daysSinceBuild = Math.floor((Date.now() - rt.siteData.asOf.getTime()) / DAY);
    const dated = rows.filter((r) => Number(r.rental_id) % 5 !== 0);
    const res = await get(rt.app, '/v1/market?kind=rental&areas=300', key);
    expect(res.body.data.activeCount).toBe(rows.length);
    expect(res.body.data.medianDaysOnMarket).toBe(
      cents(
        quantile(
          dated.map((r) => (Number(r.rental_id) % 60) + daysSinceBuild),
          0.5,
        ),
      ),
    );
  });

  it('history gains a snapshot a day as the mirror syncs; it is for the pro plan and up', async () => {
    let now = Date.now();
    // The mechanics of history, not a figure of the whole city: the site data without the RentHop rentals.
    const rt = await runtime({}, { clock: () => new Date(now), manualMarketClock: true, withoutRentHop: true });
    const key = await rt.key('pro');
    const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const datesOf = (days: { date: string }[]) => days.map((d) => d.date);
    // The template's own sync may have left a snapshot on an earlier UTC day (a run that crosses midnight):
    // what this test adds is computed from what the store held before it.
    const areaBefore = datesOf((await get(rt.app, '/v1/market/history?kind=rental&area=200', key)).body.data);
    const cityBefore = datesOf((await get(rt.app, '/v1/market/history?kind=rental', key)).body.data);
    const withDay = (dates: string[], day: string) => [...new Set([...dates, day])].sort();
    await rt.syncer.syncScope('rental', 200);
    const first = (await get(rt.app, '/v1/market/history?kind=rental&area=200', key)).body.data;
    expect(datesOf(first)).toEqual(withDay(areaBefore, dayOf(now)));
    now += DAY;
    rt.marketClock!.advance(DAY);
    await rt.syncer.syncScope('rental', 200);
    const second = (await get(rt.app, '/v1/market/history?kind=rental&area=200', key)).body.data;
    expect(datesOf(second)).toEqual(withDay(datesOf(first), dayOf(now)));
    expect(second.length).toBe(first.length + 1);
    const current = (await get(rt.app, '/v1/market?kind=rental&areas=200', key)).body.data;
    const { kind: _kind, ...figures } = current;
    expect(second.at(-1)).toEqual({ date: dayOf(now), ...figures });
    const city = datesOf((await get(rt.app, '/v1/market/history?kind=rental', key)).body.data);
    expect(city).toEqual(withDay(withDay(cityBefore, dayOf(now - DAY)), dayOf(now)));
    await expectProblem(rt.app, '/v1/market/history?kind=rental', 403, 'PLAN_REQUIRED', await rt.key('starter'));
    await expectProblem(rt.app, '/v1/market/history?kind=rental&from=2020-01-01&to=2026-01-01', 400, 'INVALID_PARAMS', key);
  });
});
