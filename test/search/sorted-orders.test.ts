import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type IndexedRow, idAt, NUMERIC_COLUMNS, SHOWN_TEXT_COLUMNS } from '../../src/search/listing-columns.js';
import { ColumnsBuilder } from '../../src/search/columns-builder.js';
import { SORTS, INDEXED_SORTS, type SortColumn } from '../../src/search/sorts.js';
import { SortedOrders, type Direction } from '../../src/search/sorted-orders.js';
import { compareText } from '../../src/search/text-ranks.js';

// The search index's orders (src/search/sorted-orders.ts), each direction read whole, position by position and run by
// run, against the store's ORDER BY computed here from the rows: each key in the direction asked, unknown values
// last, then the id in the same direction. A descending order by one key is its ascending one read backwards.
const row = (id: string) =>
  fc
    .record({
      ...Object.fromEntries(NUMERIC_COLUMNS.map((c) => [c, fc.constant(null)])),
      ...Object.fromEntries(SHOWN_TEXT_COLUMNS.map((c) => [c, fc.constant(null)])),
      price: fc.integer({ min: 1, max: 6 }),
      recommended_score: fc.integer({ min: 0, max: 3 }),
      price_per_sqft: fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
      listed_at: fc.option(fc.constantFrom('2026-11-01T00:00:00.000Z', '2026-10-02T00:00:00.000Z'), { nil: null }),
      available_at: fc.constant(null),
      building_type: fc.constant(null),
      sale_type: fc.constant(null),
      open_house_start: fc.constant(null),
      open_house_end: fc.constant(null),
    })
    .map((r) => ({ ...r, id }) as unknown as IndexedRow);
const rows = fc
  .uniqueArray(fc.stringMatching(/^[0-9a-z]{1,6}$/), { minLength: 1, maxLength: 400 })
  .chain((ids) => fc.tuple(...ids.map(row)));

/** The store's order of `rows` by `sort`, `dir`. */
function storeOrder(rows: IndexedRow[], sort: keyof typeof SORTS, dir: Direction): string[] {
  const terms = SORTS[sort]!.keyset as readonly { column: SortColumn }[];
  const sign = dir === 'ASC' ? 1 : -1;
  return [...rows]
    .sort((a, b) => {
      for (const { column } of terms) {
        const [x, y] = [a[column], b[column]];
        if (x === y) continue;
        if (x === null) return 1;
        if (y === null) return -1;
        return sign * (typeof x === 'string' ? compareText(x, y as string) : (x as number) - (y as number));
      }
      return sign * compareText(a.id as string, b.id as string);
    })
    .map((r) => r.id as string);
}

describe('the search index orders', () => {
  it('give every listing in the store order, both directions, read by position or by runs', () => {
    fc.assert(
      fc.property(rows, fc.nat(), fc.nat(), (drawn, a, b) => {
        const builder = new ColumnsBuilder(drawn.length);
        builder.add(drawn);
        const columns = builder.finish();
        const orders = SortedOrders.of(columns);
        const n = columns.size;
        const [from, to] = [Math.min(a, b) % (n + 1), Math.max(a, b) % (n + 1)].sort((x, y) => x - y);
        for (const sort of INDEXED_SORTS) {
          for (const dir of ['ASC', 'DESC'] as const) {
            const order = orders.order(sort, dir);
            const expected = storeOrder(drawn, sort, dir);
            expect(Array.from({ length: n }, (_, p) => idAt(columns, order.at(p)))).toEqual(expected);
            const read = order
              .stretches(from, to)
              .flatMap((stretch) => Array.from({ length: stretch.count }, (_, k) => order.rowOf(stretch.start + k * stretch.step)));
            expect(read.map((rowId) => idAt(columns, rowId))).toEqual(expected.slice(from, to));
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});
