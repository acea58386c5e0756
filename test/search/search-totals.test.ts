import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { useSharedTestRuntime, useTestRuntime } from '../helpers/runtime.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';

// Search totals, from the search index and from the store (SEARCH_INDEX off); every expectation here is computed
// from the source rows in this file.
const rentals = rentalRows();
const sales = saleRows();
const BOROUGHS = [
  [100, 'Manhattan'],
  [200, 'Brooklyn'],
  [300, 'Queens'],
  [400, 'Bronx'],
  [500, 'Staten Island'],
] as const;
/** The distinct rents, ascending: bounds drawn from them make prices equal to a bound common. */
const RENTS = [...new Set(rentals.map((r) => Number(r.rent)))].sort((a, b) => a - b);

/** How many source rentals a search of these bounds matches (in `boroughs` by name, when given); bounds included. */
function rentalsMatching(b: { boroughs?: string[]; minPrice?: number; maxPrice?: number; minBeds?: number; maxBeds?: number }): number {
  return rentals.filter((r) => {
    const bedrooms = Math.floor(Number(r.bedrooms));
    const rent = Number(r.rent);
    return (
      (!b.boroughs || b.boroughs.includes(r.borough)) &&
      (b.minPrice === undefined || rent >= b.minPrice) &&
      (b.maxPrice === undefined || rent <= b.maxPrice) &&
      (b.minBeds === undefined || bedrooms >= b.minBeds) &&
      (b.maxBeds === undefined || bedrooms <= b.maxBeds)
    );
  }).length;
}

describe.each(['on', 'off'])('search totals, SEARCH_INDEX %s', (searchIndex) => {
  // On is the default: the runtime the worker's read-only files share.
  const t = searchIndex === 'on' ? useSharedTestRuntime('pro') : useTestRuntime('pro', { SEARCH_INDEX: searchIndex });
  /** Waits for the runtime's search index, when it has one, so that it answers the searches below. */
  const ready = async () => void (await t.rt.reads.searcher.index?.current());

  it('equal the source rows for any areas, price and bedroom bounds (bounds included)', async () => {
    await ready();
    expect((await get(t.rt.app, '/v1/search/rentals?perPage=1', t.key)).body.meta.total).toBe(rentals.length);
    expect((await get(t.rt.app, '/v1/search/sales?perPage=1', t.key)).body.meta.total).toBe(sales.length);

    const bound = fc.option(fc.constantFrom(...RENTS), { nil: undefined });
    const beds = fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined });
    const areas = fc.option(
      fc.subarray(
        BOROUGHS.map(([id]) => id),
        { minLength: 1 },
      ),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(areas, bound, bound, beds, beds, async (areaIds, low, high, fewest, most) => {
        const [minPrice, maxPrice] = low !== undefined && high !== undefined && low > high ? [high, low] : [low, high];
        const [minBeds, maxBeds] = fewest !== undefined && most !== undefined && fewest > most ? [most, fewest] : [fewest, most];
        const boroughs = areaIds && BOROUGHS.filter(([id]) => areaIds.includes(id)).map(([, name]) => name as string);
        const expected = rentalsMatching({ boroughs, minPrice, maxPrice, minBeds, maxBeds });
        const query = Object.entries({ areas: areaIds?.join(','), minPrice, maxPrice, minBeds, maxBeds })
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${v}`)
          .join('&');
        const res = await get(t.rt.app, `/v1/search/rentals?${query}&perPage=1`, t.key);
        expect(res.body.meta.total, query).toBe(expected);
      }),
      { numRuns: 80, seed: 2016 },
    );

    // Sales: price bounds; a bedroom bound matches no listing of unknown bedrooms, as in the store.
    const prices = sales.map((r) => r.price).sort((a, b) => a - b);
    const [low, high] = [prices[Math.floor(prices.length / 4)], prices[Math.floor((prices.length * 3) / 4)]];
    const between = await get(t.rt.app, `/v1/search/sales?minPrice=${low}&maxPrice=${high}&perPage=1`, t.key);
    expect(between.body.meta.total).toBe(prices.filter((p) => p >= low && p <= high).length);
    const withBeds = await get(t.rt.app, '/v1/search/sales?minBeds=0&perPage=1', t.key);
    expect(withBeds.body.meta.total).toBe(sales.filter((r) => r.bedrooms !== null).length);
    expect(sales.filter((r) => r.bedrooms === null).length).toBeGreaterThan(0);
  });

  it('with the no side of yes/no filters, equal the source rows', async () => {
    await ready();
    // The 2016 sample knows whether a rental has no fee (no_fee 1 or 0) and nothing of pets, furniture or
    // a 3D tour (unknown: their no side is every rental).
    const side = fc.constantFrom(undefined, true, false);
    const no = fc.constantFrom(undefined, false);
    const areas = fc.option(
      fc.subarray(
        BOROUGHS.map(([id]) => id),
        { minLength: 1 },
      ),
      { nil: undefined },
    );
    const bound = fc.option(fc.constantFrom(...RENTS), { nil: undefined });
    const beds = fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(
        side,
        no,
        no,
        no,
        areas,
        bound,
        beds,
        fc.integer({ min: 1, max: 3 }),
        async (noFee, petsAllowed, furnished, has3dTour, areaIds, maxPrice, minBeds, page) => {
          const boroughs = areaIds && BOROUGHS.filter(([id]) => areaIds.includes(id)).map(([, name]) => name as string);
          const expected = rentals.filter(
            (r) =>
              (noFee === undefined || (r.no_fee === '1') === noFee) &&
              (!boroughs || boroughs.includes(r.borough)) &&
              (maxPrice === undefined || Number(r.rent) <= maxPrice) &&
              (minBeds === undefined || Math.floor(Number(r.bedrooms)) >= minBeds),
          ).length;
          const query = Object.entries({ noFee, petsAllowed, furnished, has3dTour, areas: areaIds?.join(','), maxPrice, minBeds, page })
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => `${k}=${v}`)
            .join('&');
          const res = await get(t.rt.app, `/v1/search/rentals?${query}&perPage=2`, t.key);
          expect(res.status, query).toBe(200);
          expect(res.body.meta.total, query).toBe(expected);
          expect(res.body.data.length, query).toBe(Math.max(0, Math.min(2, expected - (page - 1) * 2)));
        },
      ),
      { numRuns: 80, seed: 2016 },
    );
  });
});
