import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { marketFiguresByRank, quantileRank, type RankedListings } from '../../src/domain/market.js';

// Market figures read by rank (src/domain/market.ts) against the same figures computed here from every
// value: the type-7 quantile, rounded to cents, for any set of listings.

interface Listing {
  price: number;
  bedrooms: number | null;
  sqft: number | null;
  listedAt: string | null;
}
const DAY_MS = 86_400_000;
const NOW = new Date('2026-11-24T15:30:00Z');

/** The set of listings as the store reads it: counts, and values at a rank of one order. */
function ranked(listings: Listing[]): RankedListings {
  const window = <T>(values: T[], rank: number) => values.slice(rank, rank + 2);
  return {
    bedroomCounts: async () => {
      const counts = new Map<number | null, number>();
      for (const l of listings) counts.set(l.bedrooms, (counts.get(l.bedrooms) ?? 0) + 1);
      return [...counts].map(([bedrooms, count]) => ({ bedrooms, count }));
    },
    sizedCount: async () => listings.filter((l) => l.sqft).length,
    undatedCount: async () => listings.filter((l) => !l.listedAt).length,
    valuesAt: async (order, rank, bedrooms) => {
      if (order === 'price') {
        const of = bedrooms === undefined ? listings : listings.filter((l) => l.bedrooms === bedrooms);
        return window(
          of.map((l) => l.price).sort((a, b) => a - b),
          rank,
        );
      }
      if (order === 'pricePerSqft')
        return window(
          listings
            .filter((l) => l.sqft)
            .map((l) => l.price / l.sqft!)
            .sort((a, b) => a - b),
          rank,
        );
      if (order === 'listedAt')
        return window(
          listings
            .filter((l) => l.listedAt)
            .map((l) => l.listedAt!)
            .sort()
            .reverse(),
          rank,
        );
      throw new Error(`no such order: ${order}`);
    },
  };
}

/** The type-7 quantile of `values`, rounded to cents; null when there are none. */
function quantile(values: number[], q: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.min(low + 1, sorted.length - 1);
  return Math.round((sorted[low] + (sorted[high] - sorted[low]) * (position - low)) * 100) / 100;
}

const listing: fc.Arbitrary<Listing> = fc.record({
  price: fc.integer({ min: 500, max: 20_000_000 }),
  bedrooms: fc.option(fc.integer({ min: 0, max: 12 }), { freq: 5 }),
  sqft: fc.option(fc.integer({ min: 100, max: 10_000 }), { freq: 2 }),
  listedAt: fc.option(
    fc.integer({ min: 0, max: 400 * DAY_MS }).map((ago) => new Date(NOW.getTime() - ago).toISOString()),
    { freq: 8 },
  ),
});

describe('quantile ranks', () => {
  it.each([
    [0, 0.5, null],
    [-1, 0.5, null],
    [1, 0.5, { rank: 0, fraction: 0 }],
    [4, 0.5, { rank: 1, fraction: 0.5 }],
    [5, 0.25, { rank: 1, fraction: 0 }],
    [6, 0.75, { rank: 3, fraction: 0.75 }],
    [10, 1, { rank: 9, fraction: 0 }],
  ])('%s values, quantile %s: %j', (count, q, expected) => {
    expect(quantileRank(count, q)).toEqual(expected);
  });
});

describe('market figures by rank', () => {
  it('for any listings: counts, quartiles, medians and each bedroom count equal the figures of every value', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(listing, { maxLength: 40 }), async (listings) => {
        const figures = await marketFiguresByRank(ranked(listings), NOW);
        const prices = listings.map((l) => l.price);
        const dated = listings.filter((l) => l.listedAt).map((l) => Math.floor((NOW.getTime() - Date.parse(l.listedAt!)) / DAY_MS));
        const labels = [...new Set(listings.map((l) => l.bedrooms))].sort((a, b) => (a === null ? 1 : b === null ? -1 : a - b));
        expect(figures).toEqual({
          activeCount: listings.length,
          medianPrice: quantile(prices, 0.5),
          p25Price: quantile(prices, 0.25),
          p75Price: quantile(prices, 0.75),
          medianPricePerSqft: quantile(
            listings.filter((l) => l.sqft).map((l) => l.price / l.sqft!),
            0.5,
          ),
          medianDaysOnMarket: quantile(dated, 0.5),
          byBedroom: labels.map((bedrooms) => {
            const of = listings.filter((l) => l.bedrooms === bedrooms);
            return {
              bedrooms: bedrooms === null ? 'UNKNOWN' : bedrooms === 0 ? 'STUDIO' : String(bedrooms),
              activeCount: of.length,
              medianPrice: quantile(
                of.map((l) => l.price),
                0.5,
              ),
            };
          }),
        });
      }),
      { numRuns: 300 },
    );
  });

  it("an even count's median is the mean of the two middle prices, to the cent; one bedroom count's median is the median", async () => {
    const at = (price: number, bedrooms: number | null = 2): Listing => ({ price, bedrooms, sqft: null, listedAt: null });
    const figures = await marketFiguresByRank(ranked([at(1000), at(2001), at(3000), at(4000)]), NOW);
    expect(figures).toMatchObject({
      medianPrice: 2500.5,
      p25Price: 1750.75,
      p75Price: 3250,
      medianPricePerSqft: null,
      medianDaysOnMarket: null,
    });
    expect(figures.byBedroom).toEqual([{ bedrooms: '2', activeCount: 4, medianPrice: 2500.5 }]);
    expect((await marketFiguresByRank(ranked([]), NOW)).byBedroom).toEqual([]);
  });

  it('a listing removed between the count and the read leaves that figure unknown, not wrong', async () => {
    const store = ranked([{ price: 1000, bedrooms: 1, sqft: 500, listedAt: NOW.toISOString() }]);
    const figures = await marketFiguresByRank({ ...store, valuesAt: async () => [] }, NOW);
    expect(figures).toMatchObject({ activeCount: 1, medianPrice: null, medianPricePerSqft: null, medianDaysOnMarket: null });
  });

  it('the last of the listings at a rank removed before the read: the figure is the value still there', async () => {
    const store = ranked([1000, 2000, 3000, 4000].map((price) => ({ price, bedrooms: 1, sqft: null, listedAt: null })));
    const figures = await marketFiguresByRank(
      { ...store, valuesAt: async (order, rank, bedrooms) => (await store.valuesAt(order, rank, bedrooms)).slice(0, 1) },
      NOW,
    );
    expect(figures).toMatchObject({ medianPrice: 2000, p25Price: 1000, p75Price: 3000 });
  });
});
