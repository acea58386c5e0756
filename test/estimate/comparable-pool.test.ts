import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PoolRow } from '../../src/estimate/comparable-pool.js';
import { PoolBuilder } from '../../src/estimate/pool-builder.js';

// The pool of properties (src/estimate/comparable-pool.ts): listings at one point with one layout and price are one property,
// known by its lowest listing id, and every listing id finds its property. Expectations from the rows themselves.
describe('the comparables pool', () => {
  it('groups copies into one property by its lowest id, and finds the property of every listing id, copies too', () => {
    const row = fc.record({
      place: fc.integer({ min: 0, max: 5 }),
      bedrooms: fc.option(fc.integer({ min: 0, max: 2 })),
      price: fc.constantFrom(2000, 2500),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 5_000 }), { minLength: 1, maxLength: 1_500 }),
        fc.array(row, { minLength: 1 }),
        (ids, drawn) => {
          const rows: PoolRow[] = ids.map((id, i) => {
            const { place, bedrooms, price } = drawn[i % drawn.length];
            return {
              id: String(id),
              borough_id: 100,
              latitude: 40.7 + place / 1000,
              longitude: -73.9 - place / 1000,
              price,
              bedroom_count: bedrooms,
              full_bathroom_count: 1,
              half_bathroom_count: null,
              sqft: null,
              building_type: null,
            };
          });
          const builder = new PoolBuilder();
          builder.add(rows);
          const pool = builder.finish('rental');
          const propertyKey = (r: PoolRow) => `${r.latitude}|${r.longitude}|${r.bedroom_count}|${r.price}`;
          const idsByProperty = new Map<string, string[]>();
          for (const r of rows) idsByProperty.set(propertyKey(r), [...(idsByProperty.get(propertyKey(r)) ?? []), r.id]);
          expect(pool.size).toBe(idsByProperty.size);
          for (const r of rows) {
            const property = pool.propertyOfListing(r.id);
            expect(property).toBeDefined();
            const same = idsByProperty.get(propertyKey(r))!;
            expect(pool.idOf(property!)).toBe([...same].sort()[0]);
            expect(pool.listingCounts[property!]).toBe(same.length);
            expect(pool.pointOf(property!)).toEqual({ latitude: r.latitude, longitude: r.longitude });
          }
          expect(pool.propertyOfListing('0')).toBeUndefined();
          expect(pool.propertyOfListing('99999')).toBeUndefined();
        },
      ),
      { numRuns: 30 },
    );
  });
});
