import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ColumnsBuilder } from '../../src/search/columns-builder.js';
import {
  type IndexedRow,
  idAt,
  NUMERIC_COLUMNS,
  type NumericColumn,
  SHOWN_TEXT_COLUMNS,
  summaryRowAt,
  valueAt,
  WHOLE_NUMBER_COLUMNS,
} from '../../src/search/listing-columns.js';
import { compareText } from '../../src/search/text-ranks.js';

// The search index's columns (src/search/listing-columns.ts), built from rows in any order: every listing's values
// read back from its row as they were added, whatever order the ids came in (the build reads them ascending, and
// finds an amenity's listing by binary search then; otherwise through a map) and however many repeat a text.
const text = (values: string[]) => fc.option(fc.constantFrom(...values), { nil: null });
// With `whole`, the columns that may be held as codes get whole numbers that allow it (0 to 32,767), else any number.
const number = (c: NumericColumn, whole: boolean) =>
  fc.option(
    whole && (WHOLE_NUMBER_COLUMNS as readonly string[]).includes(c)
      ? fc.integer({ min: 0, max: c === 'year_built' ? 32_767 : 120 })
      : fc.integer({ min: -5, max: 40_000_000 }),
    { nil: null },
  );
const row = (id: string, whole: boolean) =>
  fc
    .record({
      ...Object.fromEntries(NUMERIC_COLUMNS.map((c) => [c, number(c, whole)])),
      ...Object.fromEntries(SHOWN_TEXT_COLUMNS.map((c) => [c, text(['a', 'B', 'Peña', '', `${c}-${id}`])])),
      listed_at: fc.constantFrom(
        '2026-11-01T00:00:00.000Z',
        '2026-10-02T00:00:00.000Z',
        `2026-09-${id.slice(-1).padStart(2, '1')}T00:00:00.000Z`,
      ),
      available_at: text(['2026-12-01', '2027-01-01']),
      building_type: text(['CONDO', 'COOP', 'RENTAL']),
      sale_type: text(['RESALE', 'NEW']),
      open_house_start: text(['2026-11-28T15:00:00.000Z']),
      open_house_end: text(['2026-11-28T17:00:00.000Z']),
    })
    .map((r) => ({ ...r, id }) as unknown as IndexedRow);

const rows = fc
  .uniqueArray(fc.stringMatching(/^[0-9a-z]{1,12}$/), { minLength: 1, maxLength: 3000 })
  .chain((ids) => fc.tuple(fc.constant(ids), fc.boolean()))
  .chain(([ids, whole]) => fc.tuple(fc.tuple(...ids.map((id) => row(id, whole))), fc.constant(whole)))
  .chain(([drawn, whole]) => fc.tuple(fc.constant(drawn), fc.boolean(), fc.integer({ min: 1, max: 997 }), fc.constant(whole)));

describe('the search index columns', () => {
  it('give back each listing as added, in any order of ids, with its amenities', () => {
    fc.assert(
      fc.property(rows, ([drawn, ascending, chunk, whole]) => {
        const added = ascending ? [...drawn].sort((a, b) => compareText(a.id as string, b.id as string)) : drawn;
        const builder = new ColumnsBuilder(added.length);
        for (let at = 0; at < added.length; at += chunk) builder.add(added.slice(at, at + chunk));
        const amenities = added.flatMap((r, i) => (i % 3 === 0 ? [{ listing_id: r.id as string, amenity: 'DOORMAN' }] : []));
        builder.addAmenities([...amenities, { listing_id: 'not-added', amenity: 'GYM' }]);
        const columns = builder.finish();
        expect(columns.size).toBe(added.length);
        // Whole numbers that allow it take one or two bytes a listing; others stay floats.
        for (const c of WHOLE_NUMBER_COLUMNS) {
          expect(columns.numbers[c] instanceof Float32Array || columns.numbers[c] instanceof Float64Array).toBe(
            !whole && added.some((r) => r[c] !== null && (r[c] < 0 || r[c] > 32_767)),
          );
        }
        const byId = new Map(added.map((r, i) => [r.id as string, { r, doorman: i % 3 === 0 }]));
        const seen = new Set<string>();
        for (let rowId = 0; rowId < columns.size; rowId++) {
          const id = idAt(columns, rowId);
          const { r, doorman } = byId.get(id)!;
          seen.add(id);
          const shown = summaryRowAt(columns, rowId);
          for (const c of SHOWN_TEXT_COLUMNS) expect(shown[c as keyof typeof shown]).toBe(r[c]);
          expect([shown.listed_at, shown.building_type, shown.bedroom_count, shown.latitude]).toEqual([
            r.listed_at,
            r.building_type,
            r.bedroom_count,
            r.latitude,
          ]);
          for (const c of NUMERIC_COLUMNS) expect(valueAt(columns.numbers[c], rowId)).toBe(r[c]);
          const bits = columns.amenities.get('DOORMAN')!;
          expect(((bits[rowId >>> 5] >>> (rowId & 31)) & 1) === 1).toBe(doorman);
          // Ranks follow the texts' order.
          const { ranks, values } = columns.texts.available_at;
          expect(ranks[rowId] < 0 ? null : values.at(ranks[rowId])).toBe(r.available_at);
        }
        expect(seen.size).toBe(added.length);
        expect(columns.amenities.has('GYM')).toBe(false);
        const ids = columns.texts.id.values;
        for (let i = 1; i < ids.length; i++) expect(compareText(ids.at(i - 1), ids.at(i))).toBe(-1);
      }),
      { numRuns: 25 },
    );
  });
});
