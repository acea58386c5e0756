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
});
