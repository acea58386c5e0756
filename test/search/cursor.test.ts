import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorError, decodeCursor, encodeCursor } from '../../src/search/cursor.js';
import type { ListingSearch } from '../../src/search/listing-search.js';

// Keyset cursors (src/read/search-cursor.ts): a cursor gives back the row it was made from, for the search
// that made it and no other; anything else is a CursorError.
const search = (over: Partial<ListingSearch> = {}): ListingSearch => ({
  kind: 'rental',
  sort: 'PRICE',
  sortDir: 'ASC',
  page: 1,
  perPage: 50,
  ...over,
});
const row = { id: '1545', price: 3200, listed_at: '2026-11-01T00:00:00.000Z', price_per_sqft: null, recommended_score: 71.5 };
const token = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('a cursor', () => {
  it.each([
    ['PRICE', [3200]],
    ['LISTED_AT', ['2026-11-01T00:00:00.000Z']],
    ['PRICE_PER_SQFT', [null]],
    ['RECOMMENDED', [71.5, '2026-11-01T00:00:00.000Z']],
  ] as const)("sort=%s: holds the row's sort keys and id, and decodes to them", (sort, keys) => {
    const cursor = encodeCursor(search({ sort }), row)!;
    // URL-safe, and short enough for a link: the search is held by a 12-character fingerprint, not spelled out.
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString()).f).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(decodeCursor(search({ sort }), cursor)).toEqual({ keys, id: '1545' });
  });

  it('a missing sort key is written as null', () => {
    const { price_per_sqft: _gone, ...without } = row;
    expect(decodeCursor(search({ sort: 'PRICE_PER_SQFT' }), encodeCursor(search({ sort: 'PRICE_PER_SQFT' }), without)!).keys).toEqual([
      null,
    ]);
  });

  it('sort=DISTANCE pages by number: no cursor is made, and one given is refused', () => {
    expect(encodeCursor(search({ sort: 'DISTANCE' }), row)).toBeNull();
    expect(() => decodeCursor(search({ sort: 'DISTANCE' }), encodeCursor(search(), row)!)).toThrow(/sort=DISTANCE/);
    expect(() => decodeCursor(search({ sort: 'DISTANCE' }), 'not-a-cursor')).toThrow(/not a cursor this service issued/);
  });

  it('is the same search whatever the page, its size, the position or the order of the filters', () => {
    const cursor = encodeCursor(search({ minPrice: 1000, maxBeds: 2 }), row)!;
    const same = {
      maxBeds: 2,
      minPrice: 1000,
      page: 7,
      perPage: 500,
      after: { keys: [1], id: '9' },
      noFee: undefined,
    } as Partial<ListingSearch>;
    expect(decodeCursor(search(same), cursor)).toEqual({ keys: [3200], id: '1545' });
  });

  it.each([
    ['another filter value', { minPrice: 1001, maxBeds: 2 }],
    ['one filter more', { minPrice: 1000, maxBeds: 2, noFee: true }],
    ['one filter less', { minPrice: 1000 }],
    ['another direction', { minPrice: 1000, maxBeds: 2, sortDir: 'DESC' }],
    ['another kind', { minPrice: 1000, maxBeds: 2, kind: 'sale' }],
  ] as const)('belongs to its search: %s is refused', (_what, over) => {
    const cursor = encodeCursor(search({ minPrice: 1000, maxBeds: 2 }), row)!;
    expect(() => decodeCursor(search(over as Partial<ListingSearch>), cursor)).toThrow(/another search/);
  });

  it('another sort with as many keys is refused as another search', () => {
    expect(() => decodeCursor(search({ sort: 'LISTED_AT' }), encodeCursor(search({ sort: 'PRICE' }), row)!)).toThrow(/another search/);
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['JSON null', token(null)],
    ['no keys', token({ id: '1', f: 'x' })],
    ['keys not a list', token({ k: 3200, id: '1' })],
    ['too few keys', token({ k: [], id: '1' })],
    ['too many keys', token({ k: [1, 2], id: '1' })],
    ['a numeric id', token({ k: [1], id: 1 })],
    ['no id', token({ k: [1] })],
    ['a key that is an object', token({ k: [{}], id: '1' })],
    ['a key that is a boolean', token({ k: [true], id: '1' })],
    ['one good key and one object (sort=RECOMMENDED)', token({ k: [71.5, {}], id: '1' })],
  ])('%s is not a cursor this service issued', (what, cursor) => {
    const of = search({ sort: what.includes('RECOMMENDED') ? 'RECOMMENDED' : 'PRICE' });
    expect(() => decodeCursor(of, cursor)).toThrow(CursorError);
    expect(() => decodeCursor(of, cursor)).toThrow(/not a cursor this service issued/);
  });

  it('for any row and filters: decoding what was encoded gives the row back', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.constant(null)), fc.string(), fc.integer({ min: 0, max: 100 }), (price, id, minBeds) => {
        const s = search({ sort: 'PRICE_PER_SQFT', minBeds });
        expect(decodeCursor(s, encodeCursor(s, { ...row, id, price_per_sqft: price })!)).toEqual({ keys: [price], id });
      }),
    );
  });
});
