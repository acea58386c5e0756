import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, get, walk } from '../helpers/http.js';
import { readRecordedSales, recordedSalesBacktest } from '../../src/estimate/recorded-sales-backtest.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';
import { boroughAt } from '../helpers/source-rows.js';
import { kaggleSales, manhattan2022Sales, median, workbookSales, type SourceSale } from '../helpers/city-rows.js';

/** API area ids of the boroughs by the city's borough code (1 Manhattan, 2 Bronx, 3 Brooklyn, 4 Queens, 5 Staten Island). */
const BOROUGH_AREA = [0, 100, 400, 200, 300, 500];

describe('recorded sales, mirrored from NYC Open Data', () => {
  const t = useSharedTestRuntime('business');
  let source: SourceSale[];
  beforeAll(async () => {
    source = [...kaggleSales(), ...manhattan2022Sales(), ...(await workbookSales())];
  }, 60_000);

  it('holds every source row: totals per borough and year equal the files, with and without transfers without consideration', async () => {
    const years = [...new Set(source.map((s) => s.date.slice(0, 4)))].sort();
    expect(years).toEqual(['2016', '2017', '2022', '2023', '2024']);
    for (let borough = 1; borough <= 5; borough++) {
      for (const year of years) {
        const rows = source.filter((s) => s.borough === borough && s.date.startsWith(year));
        const url = `/v1/recorded-sales?areas=${BOROUGH_AREA[borough]}&from=${year}-01-01&to=${year}-12-31&perPage=1`;
        const all = await get(t.rt.app, url, t.key);
        expect(all.status).toBe(200);
        expect(all.body.meta.total, `${url}`).toBe(rows.length);
        const sold = await get(t.rt.app, `${url}&noConsideration=false`, t.key);
        expect(sold.body.meta.total, `${url} with consideration`).toBe(rows.filter((s) => s.price !== null && s.price >= 10_000).length);
      }
    }
    const city = await get(t.rt.app, '/v1/recorded-sales?perPage=1', t.key);
    expect(city.body.meta.total).toBe(source.length);
  });

  it("a month's median price and price per square foot in a borough equal those computed from the file", async () => {
    const rows = source.filter((s) => s.borough === 3 && s.date.startsWith('2016-10') && s.price !== null && s.price >= 10_000);
    const res = await get(t.rt.app, '/v1/market/recorded-sales?areas=200&from=2016-10&to=2016-10', t.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        month: '2016-10',
        saleCount: rows.length,
        medianPrice: median(rows.map((s) => s.price!)),
        medianPricePerSqft: median(rows.filter((s) => s.gross).map((s) => Math.round((s.price! / s.gross!) * 100) / 100)),
      },
    ]);
  });

  it('market history of recorded sales reaches back to 2016 for Brooklyn, every month listed', async () => {
    expect((await get(t.rt.app, '/v1/areas/200', t.key)).body.data.name).toBe('Brooklyn');
    const res = await get(t.rt.app, '/v1/market/recorded-sales?areas=200&from=2016-01&to=2024-02', t.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(8 * 12 + 2);
    const withSales = res.body.data.filter((m: any) => m.saleCount > 0).map((m: any) => m.month);
    expect(withSales[0]).toBe('2016-09');
    expect(withSales).toContain('2024-02');
    const expected = new Map<string, number>();
    for (const s of source)
      if (s.borough === 3 && s.price !== null && s.price >= 10_000)
        expected.set(s.date.slice(0, 7), (expected.get(s.date.slice(0, 7)) ?? 0) + 1);
    for (const m of res.body.data) expect(m.saleCount, m.month).toBe(expected.get(m.month) ?? 0);
  });

  it("a neighbourhood's monthly figures are those of the sales positioned in it", async () => {
    const { items } = await walk(
      t.rt.app,
      '/v1/recorded-sales?areas=139&from=2023-06-01&to=2023-06-30&noConsideration=false&perPage=500',
      t.key,
    );
    expect(items.length).toBeGreaterThan(20);
    for (const s of items) expect(s.geoPoint).not.toBeNull();
    const res = await get(t.rt.app, '/v1/market/recorded-sales?areas=139&from=2023-06&to=2023-06', t.key);
    expect(res.body.data[0]).toEqual({
      month: '2023-06',
      saleCount: items.length,
      medianPrice: median(items.map((s) => s.salePrice)),
      medianPricePerSqft: median(items.filter((s) => s.pricePerSqft !== null).map((s) => s.pricePerSqft)),
    });
  });

  it('flags transfers without consideration and keeps them out of figures; filters by price, date, category and BBL', async () => {
    const flagged = await get(t.rt.app, '/v1/recorded-sales?noConsideration=true&perPage=100', t.key);
    expect(flagged.body.data.length).toBe(100);
    for (const s of flagged.body.data) {
      expect(s.noConsideration).toBe(true);
      expect(s.salePrice === null || s.salePrice < 10_000).toBe(true);
      expect(s.pricePerSqft).toBeNull();
    }
    const ranged = await get(
      t.rt.app,
      '/v1/recorded-sales?minPrice=1000000&maxPrice=2000000&from=2023-05-01&to=2023-05-31&buildingClassCategory=13&perPage=200',
      t.key,
    );
    expect(ranged.body.data.length).toBeGreaterThan(0);
    for (const s of ranged.body.data) {
      expect(s.salePrice).toBeGreaterThanOrEqual(1_000_000);
      expect(s.salePrice).toBeLessThanOrEqual(2_000_000);
      expect(s.saleDate >= '2023-05-01' && s.saleDate <= '2023-05-31').toBe(true);
      expect(s.buildingClassCategory).toMatch(/^13 /);
    }
    // A BBL's sales are every source row of that borough, block and lot.
    const lot = source.find((s) => s.borough === 3 && s.block && s.lot && s.date.startsWith('2017'))!;
    const bbl = `3${String(lot.block).padStart(5, '0')}${String(lot.lot).padStart(4, '0')}`;
    const byBbl = await get(t.rt.app, `/v1/recorded-sales?bbl=${bbl}&perPage=500`, t.key);
    expect(byBbl.body.meta.total).toBe(source.filter((s) => s.borough === 3 && s.block === lot.block && s.lot === lot.lot).length);
    for (const s of byBbl.body.data) expect(s.bbl).toBe(bbl);
  });

  it('sorts by date, price and price per square foot in either direction, unknown values last, pages never overlapping', async () => {
    for (const [sort, field] of [
      ['saleDate', 'saleDate'],
      ['salePrice', 'salePrice'],
      ['pricePerSqft', 'pricePerSqft'],
    ] as const) {
      for (const dir of ['ASC', 'DESC']) {
        const { items } = await walk(
          t.rt.app,
          `/v1/recorded-sales?areas=500&from=2024-01-01&to=2024-02-29&sort=${sort}&sortDir=${dir}&perPage=500`,
          t.key,
        );
        const known = items.map((s) => s[field]).filter((v) => v !== null);
        const sorted = [...known].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(known).toEqual(dir === 'ASC' ? sorted : sorted.reverse());
        const firstNull = items.findIndex((s) => s[field] === null);
        if (firstNull >= 0) expect(items.slice(firstNull).every((s) => s[field] === null)).toBe(true);
        expect(new Set(items.map((s) => s.id)).size).toBe(items.length);
      }
    }
  });

  it('answers near a point only positioned sales within the radius, and GeoJSON and CSV of the same page', async () => {
    const near = await get(t.rt.app, '/v1/recorded-sales?near=40.7484,-73.9857&radius=400&perPage=100', t.key);
    expect(near.body.data.length).toBeGreaterThan(0);
    for (const s of near.body.data) {
      const dy = (s.geoPoint.latitude - 40.7484) * 111_320;
      const dx = (s.geoPoint.longitude + 73.9857) * 111_320 * Math.cos((40.7484 * Math.PI) / 180);
      expect(Math.hypot(dx, dy)).toBeLessThanOrEqual(401);
    }
    const geo = await t.rt.app.inject({
      url: '/v1/recorded-sales?near=40.7484,-73.9857&radius=400&perPage=100&format=geojson',
      headers: { authorization: `Bearer ${t.key}` },
    });
    expect(geo.headers['content-type']).toMatch(/^application\/geo\+json/);
    expect(geo.json().features.map((f: any) => f.id)).toEqual(near.body.data.map((s: any) => s.id));
    const csv = await t.rt.app.inject({
      url: '/v1/recorded-sales?near=40.7484,-73.9857&radius=400&perPage=100&format=csv',
      headers: { authorization: `Bearer ${t.key}` },
    });
    const lines = csv.body.trim().split('\n');
    expect(lines[0].split(',').slice(0, 3)).toEqual(['id', 'boroughId', 'bbl']);
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(near.body.data.map((s: any) => s.id));
    expect(csv.headers['x-total-count']).toBe(String(near.body.meta.total));
  });

  it("positions sales from the tax lot (inside the sale's borough) or a building at the same address (its position), and finds a building's sales", async () => {
    const lots = await walk(t.rt.app, '/v1/recorded-sales?areas=100&from=2023-07-01&to=2023-07-31&perPage=500', t.key);
    const byLot = lots.items.filter((s) => s.positionSource === 'tax-lot');
    expect(byLot.length).toBeGreaterThan(lots.items.length / 2);
    for (const s of byLot) expect(boroughAt(s.geoPoint.longitude, s.geoPoint.latitude), s.id).toBe('Manhattan');
    const { items } = await walk(t.rt.app, '/v1/recorded-sales?areas=200&from=2023-03-01&to=2024-02-29&perPage=500', t.key);
    const byBuilding = items.filter((s) => s.positionSource === 'building');
    expect(byBuilding.length).toBeGreaterThan(10);
    const sale = byBuilding[0];
    const building = await get(t.rt.app, `/v1/building/${sale.buildingId}`, t.key);
    expect(building.body.data.geoCenter).toEqual(sale.geoPoint);
    expect(building.body.data.address.zipCode).toBe(sale.address.zipCode);
    const atBuilding = await walk(t.rt.app, `/v1/recorded-sales?buildingId=${sale.buildingId}&perPage=500`, t.key);
    expect(atBuilding.items.map((s) => s.id)).toContain(sale.id);
    for (const s of atBuilding.items) expect(s.buildingId).toBe(sale.buildingId);
  });

  it("a sale listing's sold comparables are recorded sales with consideration nearby, marked, scored by the comparables' formula, most similar first", async () => {
    const listing = (await get(t.rt.app, '/v1/search/sales?areas=100&perPage=1&sort=PRICE&sortDir=ASC', t.key)).body.data[0];
    const detail = (await get(t.rt.app, `/v1/property/${listing.id}`, t.key)).body.data;
    const res = await get(t.rt.app, `/v1/property/${listing.id}/sold-comparables?limit=8`, t.key);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(8);
    const radius = res.body.meta.radius;
    const rad = (d: number) => (d * Math.PI) / 180;
    const near = (a: number | null, b: number | null, scale: number) =>
      a === null || b === null ? 0.5 : Math.max(0, 1 - Math.abs(a - b) / scale);
    for (const c of res.body.data) {
      expect(c.kind).toBe('recorded-sale');
      expect(c.recordedSale.noConsideration).toBe(false);
      const [p, q] = [detail.geoPoint, c.recordedSale.geoPoint];
      const h =
        Math.sin(rad(q.latitude - p.latitude) / 2) ** 2 +
        Math.cos(rad(p.latitude)) * Math.cos(rad(q.latitude)) * Math.sin(rad(q.longitude - p.longitude) / 2) ** 2;
      const metres = 2 * 6_371_000 * Math.asin(Math.sqrt(h));
      expect(Math.abs(c.distance - metres)).toBeLessThanOrEqual(2);
      expect(c.distance).toBeLessThanOrEqual(radius);
      const score =
        0.35 * near(detail.price, c.recordedSale.salePrice, detail.price) +
        0.25 * 0.5 +
        0.15 * 0.5 +
        0.15 * near(detail.sqft, c.recordedSale.grossSquareFeet, detail.sqft ?? 1) +
        0.1 * Math.max(0, 1 - c.distance / radius);
      expect(c.similarity).toBeCloseTo(Math.round(score * 1000) / 10, 1);
    }
    const scores = res.body.data.map((c: any) => c.similarity);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    const rental = (await get(t.rt.app, '/v1/search/rentals?perPage=1', t.key)).body.data[0];
    await expectProblem(t.rt.app, `/v1/property/${rental.id}/sold-comparables`, 400, 'INVALID_PARAMS', t.key);
    await expectProblem(t.rt.app, '/v1/property/nope/sold-comparables', 404, 'NOT_FOUND', t.key);
    await expectProblem(t.rt.app, `/v1/property/${listing.id}/sold-comparables`, 403, 'PLAN_REQUIRED', await t.rt.key('starter'));
  });

  it("caps pages at the plan's size, refuses bad input with problems, and needs a key", async () => {
    const free = await t.rt.key('free');
    const page = await get(t.rt.app, '/v1/recorded-sales?perPage=500', free);
    expect(page.body.meta.perPage).toBe(10);
    expect(page.body.data).toHaveLength(10);
    await expectProblem(t.rt.app, '/v1/recorded-sales', 401, 'MISSING_API_KEY');
    for (const bad of [
      'minPrice=5&maxPrice=1',
      'from=2024-01-01&to=2023-01-01',
      'bbl=123',
      'areas=99999',
      'radius=100',
      'sort=price',
      'buildingClassCategory=1',
    ]) {
      await expectProblem(t.rt.app, `/v1/recorded-sales?${bad}`, 400, 'INVALID_PARAMS', t.key);
    }
    await expectProblem(t.rt.app, '/v1/market/recorded-sales?from=2024-02&to=2023-01', 400, 'INVALID_PARAMS', t.key);
    await expectProblem(t.rt.app, '/v1/market/recorded-sales', 403, 'PLAN_REQUIRED', free);
  });

  it('the time-split backtest estimates each sale from earlier months only, at least 30 % under the borough and category median', async () => {
    // The sales of homes with a price, read here: one-, two- and three-family houses, co-op and condo apartments.
    const rows = (await t.rt.store.db
      .selectFrom('recorded_sales')
      .select(['borough_id', 'building_class_category', 'sale_price', 'sale_date'])
      .where('no_consideration', '=', 0)
      .where('sale_price', 'is not', null)
      .execute()) as { borough_id: number; building_class_category: string | null; sale_price: number; sale_date: string }[];
    const homes = rows.filter((r) =>
      ['01', '02', '03', '09', '10', '12', '13', '17'].includes((r.building_class_category ?? '').slice(0, 2)),
    );
    const months = [...new Set(homes.map((r) => r.sale_date.slice(0, 7)))].sort();
    // The baseline, computed here: the median of every sale of the same borough and category in the months before.
    const keyOf = (r: (typeof homes)[number]) => `${r.borough_id}|${r.building_class_category!.slice(0, 2)}`;
    const errors: number[] = [];
    const before = new Map<string, number[]>();
    for (const [i, month] of months.entries()) {
      const sold = homes.filter((h) => h.sale_date.slice(0, 7) === month);
      if (i >= 3) {
        const medians = new Map([...before].map(([key, prices]) => [key, median(prices)!]));
        for (const r of sold) {
          const estimate = medians.get(keyOf(r));
          if (estimate !== undefined) errors.push(Math.abs(estimate - Number(r.sale_price)) / Number(r.sale_price));
        }
      }
      for (const r of sold) {
        const prices = before.get(keyOf(r));
        if (prices) prices.push(Number(r.sale_price));
        else before.set(keyOf(r), [Number(r.sale_price)]);
      }
    }
    // (city-rows' median rounds to cents: the errors' median is taken here.)
    errors.sort((a, b) => a - b);
    const middle = errors.length >> 1;
    const baseline = Math.round(1000 * (errors.length % 2 ? errors[middle] : (errors[middle - 1] + errors[middle]) / 2)) / 10;
    const city = recordedSalesBacktest(await readRecordedSales(t.rt.store.db)).find((r) => r.place === 'City')!;
    console.log(
      `recorded sales, time split: ${city.method.count} sales, MdAPE ${city.method.mdape} % against ${city.areaMedian.mdape} %, in 80 % interval ${city.method.coverage} %`,
    );
    expect(city.method.count).toBe(homes.filter((h) => h.sale_date.slice(0, 7) >= months[3]).length);
    expect(city.areaMedian.mdape).toBeCloseTo(baseline, 1);
    expect(city.baselines.areaMedian).toBe('borough and category median');
    expect(city.method.estimated).toBeGreaterThan(0.95 * city.method.count);
    expect(city.method.mdape!).toBeLessThanOrEqual(0.7 * baseline);
    expect(city.method.coverage!).toBeGreaterThanOrEqual(78);
    expect(city.method.coverage!).toBeLessThanOrEqual(82);
  }, 120_000);
});
