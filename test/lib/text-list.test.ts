import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PACKED_FROM, TextList } from '../../src/lib/text-list.js';

// A list of texts (src/lib/text-list.ts): the search index's and the comparables' ids and URLs, packed as bytes from
// PACKED_FROM of them. Whatever the texts (any Unicode, empty ones, repeats), each reads back as it was given.
describe('a list of texts', () => {
  it('gives back every text as given, below and above the length from which it packs', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (drawn, packed) => {
          // Drawn texts repeated to a length either side of the threshold.
          const length = packed ? PACKED_FROM + drawn.length : Math.min(drawn.length, PACKED_FROM - 1);
          const values = Array.from({ length }, (_, i) => drawn[i % drawn.length]);
          const list = TextList.of(values);
          expect(list.length).toBe(values.length);
          for (let i = 0; i < values.length; i++) expect(list.at(i)).toBe(values[i]);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('packs the ids of a city: New York street names with accents and a listing id per row', () => {
    const values = Array.from({ length: 5000 }, (_, i) => (i % 3 === 0 ? `Avenida Peña ${i}` : i % 3 === 1 ? `${8_000_000 + i}` : ''));
    const list = TextList.of(values);
    expect([list.at(0), list.at(1), list.at(2), list.at(4999)]).toEqual([values[0], values[1], '', values[4999]]);
  });

  it('gives back ids that are whole numbers as given, and texts that only look like numbers as given', () => {
    // Kept as numbers only when every text is one written plainly: a leading zero, a sign, a 16th digit or an
    // exponent would not come back as it was written from a double.
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.nat().map(String), fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }).map(String)), { minLength: 1, maxLength: 20 }),
        fc.constantFrom('', '007', '-1', '1e3', '1234567890123456', '1.5', ' 1'),
        fc.boolean(),
        (drawn, odd, withOdd) => {
          const values = Array.from({ length: PACKED_FROM + drawn.length }, (_, i) => drawn[i % drawn.length]);
          if (withOdd) values[values.length >> 1] = odd;
          const list = TextList.of(values);
          expect(list.length).toBe(values.length);
          for (let i = 0; i < values.length; i++) expect(list.at(i)).toBe(values[i]);
        },
      ),
      { numRuns: 40 },
    );
  });
});
