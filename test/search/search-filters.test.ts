import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { monthlyCharges } from '../../src/domain/monthly-cost.js';
import { lowestRecommendedScore, recommendedScore } from '../../src/domain/recommended-score.js';
import { get, walk } from '../helpers/http.js';
import { SHARED_DATA } from '../helpers/paths.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';
import { allSaleRows, csvRows, rentalRows, saleRows, upstreamParents, type RentalRow, type SaleRow } from '../helpers/source-rows.js';

const t = useSharedTestRuntime('pro');

// Every expectation here is computed from the source rows in this file, not from the service's code.
const rentals = rentalRows();
const sales = saleRows();
const DAY = 86_400_000;

async function all(path: string) {
  const { items, total } = await walk(t.rt.app, path, t.key);
  expect(items.length).toBe(total);
  return items;
}

const saleId = (r: SaleRow) => r.id;

describe('rental filters against the source rows', () => {
  it('Queens rentals with a doorman and no fee, sorted by price ascending', async () => {
    const expected = rentals
      .filter((r) => r.borough === 'Queens' && r.has_doorman === '1' && r.no_fee === '1')
      .sort((a, b) => Number(a.rent) - Number(b.rent) || (a.rental_id < b.rental_id ? -1 : 1));
    expect(expected.length).toBeGreaterThan(10);
    const items = await all('/v1/search/rentals?areas=300&amenities=DOORMAN&noFee=true&sort=PRICE&sortDir=ASC&perPage=500');
    expect(items.map((i) => i.id)).toEqual(expected.map((r) => r.rental_id));
    expect(items.map((i) => i.price)).toEqual(expected.map((r) => Number(r.rent)));
  });

  it("borough ids are the API's: 200 is Brooklyn, 300 Queens, 100 Manhattan", async () => {
    for (const [id, borough] of [
      [200, 'Brooklyn'],
      [300, 'Queens'],
      [100, 'Manhattan'],
      [400, 'Bronx'],
      [500, 'Staten Island'],
    ] as const) {
      const res = await get(t.rt.app, `/v1/search/rentals?areas=${id}&perPage=1`, t.key);
      const expected = rentals.filter((r) => r.borough === borough).length;
      expect(expected, borough).toBeGreaterThan(0);
      expect(res.body.meta.total, borough).toBe(expected);
    }
  });

  it('areas= matches listings in any area below the one given (All Downtown)', async () => {
    const regions = JSON.parse(readFileSync(join(SHARED_DATA, 'areas', 'regions.json'), 'utf8')) as { id: number; name: string }[];
    const parents = upstreamParents();
    const under = (id: number, ancestor: number) => {
      for (let c: number | null | undefined = id; c; c = parents.get(c)) if (c === ancestor) return true;
      return false;
    };
    const manhattanId = (name: string) => regions.find((a) => a.name.toLowerCase() === name.toLowerCase() && under(a.id, 100))?.id;
    // A StreetEasy rental's area is its neighbourhood's; a RentHop rental's the deepest outline holding its point.
    const areaOf = (r: RentalRow) => (r.source === 'renthop' ? Number(r.area_id) : (manhattanId(r.neighborhood) ?? 0));
    const expected = rentals.filter((r) => r.borough === 'Manhattan' && under(areaOf(r), 102));
    expect(expected.length).toBeGreaterThan(100);
    const res = await get(t.rt.app, '/v1/search/rentals?areas=102&perPage=1', t.key);
    expect(res.body.meta.total).toBe(expected.length);
    const two = await get(t.rt.app, '/v1/search/rentals?areas=102,200&perPage=1', t.key);
    expect(two.body.meta.total).toBe(expected.length + rentals.filter((r) => r.borough === 'Brooklyn').length);
  });

  it("a map of Williamsburg: every rental there, RentHop's at their source rows' positions", async () => {
    const parents = upstreamParents();
    const under = (id: number, ancestor: number) => {
      for (let c: number | null | undefined = id; c; c = parents.get(c)) if (c === ancestor) return true;
      return false;
    };
    // Williamsburg is 302 (East Williamsburg, 373, lies below it); the sample's rows name their neighbourhood.
    const expected = rentals.filter((r) =>
      r.source === 'renthop'
        ? under(Number(r.area_id), 302)
        : ['Williamsburg', 'East Williamsburg'].includes(r.neighborhood) && r.borough === 'Brooklyn',
    );
    const items = await all('/v1/search/rentals?areas=302&perPage=500');
    expect(items.map((i) => i.id).sort()).toEqual(expected.map((r) => r.rental_id).sort());
    const byId = new Map(items.map((i) => [i.id, i]));
    const real = expected.filter((r) => r.source === 'renthop');
    expect(real.length).toBeGreaterThan(500);
    for (const r of real) expect(byId.get(r.rental_id).geoPoint).toEqual({ latitude: Number(r.latitude), longitude: Number(r.longitude) });
    // Positions of real buildings, not a handful of generated points.
    expect(new Set(items.map((i) => `${i.geoPoint.latitude},${i.geoPoint.longitude}`)).size).toBeGreaterThan(200);
  });

  it('beds, baths, price and size ranges', async () => {
    const cases: [string, (r: Record<string, string>) => boolean][] = [
      ['minBeds=2&maxBeds=3', (r) => Math.floor(Number(r.bedrooms)) >= 2 && Math.floor(Number(r.bedrooms)) <= 3],
      ['minBaths=2', (r) => Math.floor(Number(r.bathrooms)) >= 2],
      ['maxBaths=0', (r) => Math.floor(Number(r.bathrooms)) <= 0],
      ['minPrice=3000&maxPrice=4500', (r) => Number(r.rent) >= 3000 && Number(r.rent) <= 4500],
      ['minSqft=1000&maxSqft=1500', (r) => Number(r.size_sqft) >= 1000 && Number(r.size_sqft) <= 1500],
      ['maxBeds=0&areas=200', (r) => Number(r.bedrooms) < 1 && r.borough === 'Brooklyn'],
      ['amenities=GYM,ELEVATOR,WASHER_DRYER', (r) => r.has_gym === '1' && r.has_elevator === '1' && r.has_washer_dryer === '1'],
      ['noFee=false', (r) => r.no_fee !== '1'],
    ];
    for (const [query, keep] of cases) {
      const res = await get(t.rt.app, `/v1/search/rentals?${query}&perPage=1`, t.key);
      expect(res.body.meta.total, query).toBe(rentals.filter(keep).length);
    }
  });

  it('days on market count from the listing date (rental_id mod 60 days before the build day)', async () => {
    const dom = (r: Record<string, string>) => (Number(r.rental_id) % 60) + Math.floor((Date.now() - t.rt.siteData.asOf.getTime()) / DAY);
    const res = await get(t.rt.app, '/v1/search/rentals?minDaysOnMarket=10&maxDaysOnMarket=20&perPage=1', t.key);
    expect(res.body.meta.total).toBe(rentals.filter((r) => dom(r) >= 10 && dom(r) <= 20).length);
    const page = await get(t.rt.app, '/v1/search/rentals?minDaysOnMarket=10&maxDaysOnMarket=20&perPage=50', t.key);
    for (const item of page.body.data) expect(item.daysOnMarket).toBeGreaterThanOrEqual(10);
  });

  it('filters the data has no facts for answer nothing, not everything', async () => {
    for (const query of ['petsAllowed=true', 'furnished=true', 'hasOpenHouse=true', 'has3dTour=true', 'availableBefore=2030-01-01']) {
      const res = await get(t.rt.app, `/v1/search/rentals?${query}`, t.key);
      expect(res.body.meta.total, query).toBe(0);
    }
    expect((await get(t.rt.app, '/v1/search/rentals?has3dTour=false&perPage=1', t.key)).body.meta.total).toBe(rentals.length);
  });

  it('prewar uses the building age of the 2016 sample (built before 1940)', async () => {
    const res = await get(t.rt.app, '/v1/search/rentals?prewar=true&perPage=1', t.key);
    expect(res.body.meta.total).toBe(rentals.filter((r) => 2016 - Number(r.building_age_yrs) < 1940).length);
  });

  /** Transit score of each rental at its served position, computed here from the MTA station list. */
  function rentalTransitScores(): Map<string, number> {
    const stations = csvRows('subway/stations.csv').map((s) => ({ lat: Number(s['GTFS Latitude']), lon: Number(s['GTFS Longitude']) }));
    const rad = Math.PI / 180;
    const meters = (a: { latitude: number; longitude: number }, b: { lat: number; lon: number }) => {
      const h =
        Math.sin(((b.lat - a.latitude) * rad) / 2) ** 2 +
        Math.cos(a.latitude * rad) * Math.cos(b.lat * rad) * Math.sin(((b.lon - a.longitude) * rad) / 2) ** 2;
      return 2 * 6_371_000 * Math.asin(Math.sqrt(h));
    };
    const score = (p: { latitude: number; longitude: number }) => {
      const d = stations.map((s) => meters(p, s));
      return Math.min(
        100,
        Math.round(100 * Math.max(0, 1 - Math.min(...d) / 1600) + 5 * Math.max(0, d.filter((x) => x <= 800).length - 1)),
      );
    };
    const scores = new Map<string, number>();
    for (const l of t.rt.siteData.listings)
      if (l.kind === 'rental' && l.node.geoPoint) scores.set(l.node.id, score(l.node.geoPoint as never));
    return scores;
  }

  it('minTransitScore counts subway stations near each listing', async () => {
    const scores = rentalTransitScores();
    const expected = rentals.filter((r) => scores.has(r.rental_id) && scores.get(r.rental_id)! >= 90).length;
    const res = await get(t.rt.app, '/v1/search/rentals?minTransitScore=90&perPage=1', t.key);
    expect(res.body.meta.total).toBe(expected);
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(rentals.length);
  });

  it('RECOMMENDED orders by the documented score, then listing date, then id, in both directions', async () => {
    // score = round(0.6 x transit score) + 20 if the size is known + 10 with a lead photo (none in the 2016 sample) + 10 if no fee;
    // the listing date is the build day less (rental_id mod 60) days, so a smaller remainder is more recent.
    const scores = rentalTransitScores();
    const rows = rentals
      .filter((r) => r.borough === 'Queens')
      .map((r) => ({
        id: r.rental_id,
        score: Math.round(0.6 * (scores.get(r.rental_id) ?? 0)) + (Number(r.size_sqft) > 0 ? 20 : 0) + (r.no_fee === '1' ? 10 : 0),
        age: Number(r.rental_id) % 60,
      }));
    const descending = [...rows].sort((a, b) => b.score - a.score || a.age - b.age || (a.id < b.id ? 1 : -1));
    expect(new Set(descending.map((r) => r.score)).size).toBeGreaterThan(3);
    for (const [dir, expected] of [
      ['DESC', descending],
      ['ASC', [...descending].reverse()],
    ] as const) {
      const items = await all(`/v1/search/rentals?areas=300&sort=RECOMMENDED&sortDir=${dir}&perPage=500`);
      expect(
        items.map((i) => i.id),
        dir,
      ).toEqual(expected.map((r) => r.id));
    }
    const byDefault = await get(t.rt.app, '/v1/search/rentals?areas=300&perPage=30', t.key);
    expect(byDefault.body.data.map((i: { id: string }) => i.id)).toEqual(descending.slice(0, 30).map((r) => r.id));
    // With a minimum transit score (the median's), in both directions and page by page: exactly those, in order.
    const transit = descending
      .map((r) => scores.get(r.id))
      .filter((v): v is number => v !== undefined)
      .sort((a, b) => a - b);
    const floor = transit[Math.floor(transit.length / 2)];
    const within = descending.filter((r) => (scores.get(r.id) ?? -1) >= floor);
    expect(within.length).toBeGreaterThan(10);
    expect(within.length).toBeLessThan(descending.length - 10);
    for (const [dir, expected] of [
      ['DESC', within],
      ['ASC', [...within].reverse()],
    ] as const) {
      const items = await all(`/v1/search/rentals?areas=300&minTransitScore=${floor}&sortDir=${dir}&perPage=7`);
      expect(
        items.map((i) => i.id),
        dir,
      ).toEqual(expected.map((r) => r.id));
    }
  });

  it('a minimum transit score sets a floor under the recommended score (any size, photo and fee)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        fc.option(fc.double({ min: 0, max: 1e5, noNaN: true })),
        fc.option(fc.string()),
        fc.option(fc.boolean()),
        (min, above, sqft, leadPhotoKey, noFee) => {
          const transitScore = Math.min(100, min + above);
          expect(recommendedScore({ transitScore, sqft, leadPhotoKey, noFee })).toBeGreaterThanOrEqual(lowestRecommendedScore(min));
        },
      ),
      { numRuns: 2000, seed: 2016 },
    );
    // The floor is reached: a listing of exactly that transit score and nothing else scores it.
    for (let min = 0; min <= 100; min++)
      expect(recommendedScore({ transitScore: min, sqft: null, leadPhotoKey: null, noFee: false })).toBe(lowestRecommendedScore(min));
  });
});

describe('sale filters against the source rows', () => {
  it('every NY-House listing not in contract is an active sale, in every borough', async () => {
    expect((await get(t.rt.app, '/v1/search/sales?perPage=1', t.key)).body.meta.total).toBe(sales.length);
    for (const [id, borough] of [
      [100, 'Manhattan'],
      [200, 'Brooklyn'],
      [300, 'Queens'],
      [400, 'Bronx'],
      [500, 'Staten Island'],
    ] as const) {
      const expected = sales.filter((s) => s.borough === borough).length;
      expect(expected, borough).toBeGreaterThan(100);
      expect((await get(t.rt.app, `/v1/search/sales?areas=${id}&perPage=1`, t.key)).body.meta.total, borough).toBe(expected);
    }
  });

  it('building types from the listing type (any may match); a two-bedroom condo in Manhattan', async () => {
    const type: Record<string, string> = {
      'Co-op for sale': 'CO_OP',
      'Condo for sale': 'CONDO',
      'House for sale': 'HOUSE',
      'Multi-family home for sale': 'MULTIFAMILY',
      'Townhouse for sale': 'TOWNHOUSE',
    };
    const res = await get(t.rt.app, '/v1/search/sales?buildingType=CONDO,CO_OP&perPage=1', t.key);
    expect(res.body.meta.total).toBe(sales.filter((r) => ['CONDO', 'CO_OP'].includes(type[r.type])).length);
    const town = await get(t.rt.app, '/v1/search/sales?buildingType=TOWNHOUSE&sort=PRICE&sortDir=DESC&perPage=5', t.key);
    const towns = sales.filter((r) => type[r.type] === 'TOWNHOUSE').sort((a, b) => b.price - a.price || Number(b.id) - Number(a.id));
    expect(town.body.meta.total).toBe(towns.length);
    expect(town.body.data.map((i: any) => i.id)).toEqual(towns.slice(0, 5).map(saleId));
    const twoBedroomCondos = sales.filter((r) => r.borough === 'Manhattan' && type[r.type] === 'CONDO' && r.bedrooms === 2);
    expect(twoBedroomCondos.length).toBeGreaterThan(10);
    const condos = await all('/v1/search/sales?areas=100&buildingType=CONDO&minBeds=2&maxBeds=2&sort=PRICE&sortDir=ASC&perPage=50');
    expect(condos.map((i) => i.id)).toEqual(
      [...twoBedroomCondos].sort((a, b) => a.price - b.price || Number(a.id) - Number(b.id)).map(saleId),
    );
  });

  it('beds, baths, price, size, brokerage and area', async () => {
    const parents = upstreamParents();
    const under = (id: number, ancestor: number) => {
      for (let c: number | null | undefined = id; c; c = parents.get(c)) if (c === ancestor) return true;
      return false;
    };
    const cases: [string, (r: SaleRow) => boolean][] = [
      ['minBeds=3&maxBeds=4', (r) => r.bedrooms !== null && r.bedrooms >= 3 && r.bedrooms <= 4],
      ['minBaths=2', (r) => r.fullBaths !== null && r.fullBaths >= 2],
      ['minPrice=1000000&maxPrice=2000000', (r) => r.price >= 1_000_000 && r.price <= 2_000_000],
      ['minSqft=2000', (r) => r.sqft !== null && r.sqft >= 2000],
      ['areas=140', (r) => under(r.areaId, 140)],
      ['areas=301', (r) => under(r.areaId, 301)],
    ];
    for (const [query, keep] of cases) {
      const res = await get(t.rt.app, `/v1/search/sales?${query}&perPage=1`, t.key);
      const expected = sales.filter(keep).length;
      expect(expected, query).toBeGreaterThan(0);
      expect(res.body.meta.total, query).toBe(expected);
    }
    const sample = sales.find((s) => s.broker.startsWith('Brokered by ') && s.borough === 'Queens')!;
    const detail = (await get(t.rt.app, `/v1/property/${sample.id}`, t.key)).body.data;
    expect(detail.sourceGroupLabel).toBe(sample.broker.slice('Brokered by '.length).replace(/\s+/g, ' ').trim());
    expect(detail.geoPoint).toEqual({ latitude: sample.latitude, longitude: sample.longitude });
  });

  it('a listing in contract is not found by an active search, but answers by id with its status', async () => {
    const inContract = allSaleRows().filter((s) => s.inContract);
    expect(inContract.length).toBeGreaterThan(100);
    const found = await get(t.rt.app, `/v1/property/${inContract[0].id}`, t.key);
    expect(found.status).toBe(200);
    expect(found.body.data.status).toBe('IN_CONTRACT');
    const total = (await get(t.rt.app, '/v1/search/sales?perPage=1', t.key)).body.meta.total;
    expect(total).toBe(sales.length);
  });

  it('saleType is not known from the upstream site: the filter matches nothing rather than everything', async () => {
    expect((await get(t.rt.app, '/v1/search/sales?saleType=RESALE&perPage=1', t.key)).body.meta.total).toBe(0);
  });

  it('listedAfter/listedBefore use the listing date rule (id mod 60 days before the build day)', async () => {
    const listed = (r: SaleRow) => t.rt.siteData.asOf.getTime() - (Number(r.id) % 60) * DAY;
    const after = new Date(t.rt.siteData.asOf.getTime() - 30 * DAY).toISOString();
    const before = new Date(t.rt.siteData.asOf.getTime() - 10 * DAY).toISOString();
    const res = await get(t.rt.app, `/v1/search/sales?listedAfter=${after}&listedBefore=${before}&perPage=1`, t.key);
    const expected = sales.filter((r) => listed(r) > Date.parse(after) && listed(r) < Date.parse(before)).length;
    expect(expected).toBeGreaterThan(0);
    expect(res.body.meta.total).toBe(expected);
  });

  it('maxMonthlyCost is the mortgage payment at 6.5%, 20% down, 30 years (no charges known)', async () => {
    const r = 0.065 / 12;
    const factor = (0.8 * r) / (1 - (1 + r) ** -360);
    const res = await get(t.rt.app, '/v1/search/sales?maxMonthlyCost=5000&perPage=1', t.key);
    const expected = sales.filter((s) => s.price * factor <= 5000).length;
    expect(expected).toBeGreaterThan(0);
    expect(res.body.meta.total).toBe(expected);
  });

  it('stored monthly charges are never negative, whatever parts a listing gives', () => {
    const part = fc.option(fc.double({ min: -1e5, max: 1e5, noNaN: true }));
    fc.assert(
      fc.property(part, part, part, (maintenance, commonCharges, taxes) => {
        expect(monthlyCharges({ maintenance, commonCharges, taxes })).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 1000, seed: 2016 },
    );
  });

  it.each(['DESC', 'ASC'])('maxMonthlyCost sorted by price %s lists exactly those sales, in that order, page after page', async (dir) => {
    const r = 0.065 / 12;
    const factor = (0.8 * r) / (1 - (1 + r) ** -360);
    const sign = dir === 'ASC' ? 1 : -1;
    const byPrice = [...sales].sort((a, b) => sign * (a.price - b.price || Number(a.id) - Number(b.id)));
    // A round maximum, and one a dollar above the monthly payment of the median sale (the bound falls just past it).
    const median = byPrice[Math.floor(byPrice.length / 2)].price;
    for (const max of [5000, Math.ceil(median * factor)]) {
      const expected = byPrice.filter((s) => s.price * factor <= max);
      expect(expected.length).toBeGreaterThan(100);
      const items = await all(`/v1/search/sales?maxMonthlyCost=${max}&sort=PRICE&sortDir=${dir}&perPage=500`);
      expect(items.map((i) => i.id)).toEqual(expected.map(saleId));
    }
  });

  it('price per square foot sort puts known values first, descending, then unknown', async () => {
    const res = await get(t.rt.app, '/v1/search/sales?sort=PRICE_PER_SQFT&perPage=200', t.key);
    const best = sales
      .filter((s) => s.sqft !== null && s.sqft > 0)
      .map((s) => s.price / s.sqft!)
      .sort((a, b) => b - a)[0];
    const first = await get(t.rt.app, `/v1/property/${res.body.data[0].id}`, t.key);
    expect(first.body.data.pricePerSqft).toBeCloseTo(best, 1);
    const prices = [];
    for (const item of res.body.data.slice(0, 20))
      prices.push((await get(t.rt.app, `/v1/property/${item.id}`, t.key)).body.data.pricePerSqft);
    expect(prices).toEqual([...prices].sort((a, b) => b - a));
  });

  it.each(['DESC', 'ASC'])(
    'a size range sorted by price per square foot %s lists exactly those listings, in that order, page after page',
    async (dir) => {
      // Price per square foot = price / size in dollars, rounded to the cent; ties by id in the same direction.
      const ppsf = (price: number, sqft: number) => Math.round((price / sqft) * 100) / 100;
      const sign = dir === 'DESC' ? -1 : 1;
      const inOrder = (rows: { id: string; ppsf: number }[]) =>
        rows.sort((a, b) => sign * (a.ppsf - b.ppsf) || sign * (a.id < b.id ? -1 : 1)).map((r) => r.id);
      const rentalsExpected = inOrder(
        rentals
          .filter((r) => Number(r.size_sqft) >= 700 && Number(r.size_sqft) <= 900)
          .map((r) => ({ id: r.rental_id, ppsf: ppsf(Number(r.rent), Number(r.size_sqft)) })),
      );
      expect(rentalsExpected.length).toBeGreaterThan(100);
      const rentalItems = await all(`/v1/search/rentals?minSqft=700&maxSqft=900&sort=PRICE_PER_SQFT&sortDir=${dir}&perPage=50`);
      expect(rentalItems.map((i) => i.id)).toEqual(rentalsExpected);
      const salesExpected = inOrder(
        sales.filter((s) => s.sqft !== null && s.sqft >= 1500).map((s) => ({ id: saleId(s), ppsf: ppsf(s.price, s.sqft!) })),
      );
      expect(salesExpected.length).toBeGreaterThan(50);
      const saleItems = await all(`/v1/search/sales?minSqft=1500&sort=PRICE_PER_SQFT&sortDir=${dir}&perPage=50`);
      expect(saleItems.map((i) => i.id)).toEqual(salesExpected);
    },
  );

  it('LISTED_AT sort ascending gives the oldest sale first (the largest id mod 60, then the smallest id)', async () => {
    const oldest = [...sales].sort((a, b) => (Number(b.id) % 60) - (Number(a.id) % 60) || Number(a.id) - Number(b.id))[0];
    const res = await get(t.rt.app, '/v1/search/sales?sort=LISTED_AT&sortDir=ASC&perPage=1', t.key);
    expect(res.body.data[0].id).toBe(saleId(oldest));
  });
});
