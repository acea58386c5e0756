import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactPositions, Millionths, positionAt } from '../../src/lib/narrow-arrays.js';

// Positions kept as whole millionths when every one reads back the same (src/lib/narrow-arrays.ts): the estimates'
// comparables hold a million latitudes and longitudes so.
describe('positions in millionths', () => {
  it('gives back every position as given: as millionths when each has at most six decimals, else as doubles', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -180_000_000, max: 180_000_000 }), { minLength: 1, maxLength: 50 }),
        fc.option(fc.double({ min: -180, max: 180, noNaN: true })),
        (millionths, odd) => {
          const values = millionths.map((m) => m / 1e6);
          if (odd !== null) values.push(odd);
          const kept = exactPositions(values);
          const wholeMillionths = odd === null || Object.is(Math.round(odd * 1e6) / 1e6 + 0, odd);
          expect(kept instanceof Millionths).toBe(wholeMillionths);
          for (let i = 0; i < values.length; i++) expect(Object.is(positionAt(kept, i), values[i])).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps the city at six decimals, and a seventh as doubles', () => {
    expect(exactPositions([40.760471, -74.00347, 40.7, -73.9]) instanceof Millionths).toBe(true);
    const finer = exactPositions([40.760471, 40.7604712]);
    expect(finer instanceof Float64Array).toBe(true);
    expect(positionAt(finer, 1)).toBe(40.7604712);
  });
});
