import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimals, doubleAt, exactDecimals, exactDoubles } from '../../src/lib/narrow-arrays.js';

// Doubles kept as whole units of a decimal scale when every one reads back the same (src/lib/narrow-arrays.ts): the
// search index's positions, price positions and prices per square foot, and the comparables' positions.
describe('doubles in decimal units', () => {
  const decimals = fc.integer({ min: 0, max: 6 }).chain((places) =>
    fc.array(
      fc.oneof(
        fc.integer({ min: -180_000_000, max: 180_000_000 }).map((n) => n / 10 ** places),
        fc.constant(Number.NaN),
      ),
      {
        minLength: 1,
        maxLength: 60,
      },
    ),
  );

  it('gives back every number as given (NaN as unknown), as units when each has few enough decimals, else as doubles', () => {
    fc.assert(
      fc.property(decimals, fc.option(fc.double({ min: -1e6, max: 1e6 })), (values, odd) => {
        if (odd !== null) values.push(odd);
        const kept = exactDoubles(values);
        for (let i = 0; i < values.length; i++) expect(Object.is(doubleAt(kept, i), values[i])).toBe(true);
        if (odd === null) expect(kept).toBeInstanceOf(Decimals);
      }),
      { numRuns: 300 },
    );
  });

  it('a range of numbers is the range of units between the bounds it gives, never the unknown', () => {
    fc.assert(
      fc.property(
        decimals,
        fc.oneof(fc.double({ min: -200, max: 200, noNaN: true }), fc.constantFrom(-Infinity, Infinity)),
        fc.oneof(fc.double({ min: -200, max: 200, noNaN: true }), fc.constantFrom(-Infinity, Infinity)),
        (values, min, max) => {
          const kept = exactDecimals(values)!;
          const [low, high] = kept.unitsWithin(min, max);
          for (let i = 0; i < values.length; i++) {
            const unit = kept.units[i];
            expect(unit >= low && unit <= high, `${values[i]} within [${min}, ${max}]`).toBe(values[i] >= min && values[i] <= max);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps the city at six decimals, a percent at one, and a seventh decimal or a negative zero as doubles', () => {
    expect(exactDecimals([40.760471, -74.00347, 40.7, Number.NaN])?.scale).toBe(1e6);
    expect(exactDecimals([31.3, -2.6, 89.5])?.scale).toBe(10);
    expect(exactDecimals([40.760471, 40.7604712])).toBeNull();
    expect(exactDecimals([0, -0])).toBeNull();
  });
});
