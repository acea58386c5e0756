import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PathList } from '../../src/lib/path-list.js';

// URL paths kept as a head's code and, unless it is the entry's own key, their last segment (src/lib/path-list.ts):
// the search index's listing URLs. Whatever the paths (none with a slash, several, empty segments, keys that match
// some paths and not others), each reads back as it was given.
describe('a list of URL paths', () => {
  it('gives back every path as given, whether its last segment is its key or not', () => {
    const segment = fc.oneof(fc.constantFrom('rental', 'building', 'sale', '', '410', '7025132'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(
        fc.array(fc.record({ parts: fc.array(segment, { maxLength: 4 }), key: fc.nat(99_999).map(String), ownKey: fc.boolean() }), {
          minLength: 1,
          maxLength: 60,
        }),
        (entries) => {
          const keys = entries.map((e) => e.key);
          const values = entries.map((e) => [...e.parts, e.ownKey ? e.key : 'x'].join('/'));
          const list = PathList.of(values, (i) => keys[i]);
          expect(list.length).toBe(values.length);
          for (let i = 0; i < values.length; i++) expect(list.at(i)).toBe(values[i]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it("reads the listing sites' paths: a rental's ends with its id, a sale's with its unit", () => {
    const ids = Array.from({ length: 3000 }, (_, i) => String(7_000_000 + i));
    const values = ids.map((id, i) => (i % 10 === 0 ? `/building/595-main-st-manhattan/${i}a` : `/rental/${id}`));
    const list = PathList.of(values, (i) => ids[i]);
    expect([0, 1, 10, 2999].map((i) => list.at(i))).toEqual([values[0], values[1], values[10], values[2999]]);
    expect(Array.from({ length: 3000 }, (_, i) => list.at(i))).toEqual(values);
  });
});
