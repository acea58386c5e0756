/**
 * The order of the search index's rows (listing-columns.ts): a kind's listings numbered by area, then bedroom count,
 * then price (unknown last each time), then the order they were added, so that the listings of an area and a bedroom
 * count are one range of rows, and a price range within it one range too.
 */

import { codesFor, type Codes, type Floats as Numbers } from '../lib/narrow-arrays.js';
import type { Steps } from '../lib/stepwise.js';

/** Rows `start` to `end - 1`. */
export interface RowRange {
  readonly start: number;
  readonly end: number;
}

/**
 * The order of the listings added (numbered 0 to n - 1 as added) by area, then bedrooms, then price, unknown last
 * each time, ties in the order added: `addedByRow[rowId]` is the listing (as added) that takes `rowId`. In steps, one a key.
 */
export function* rowsByAreaBedroomsPrice(area: Numbers, bedrooms: Numbers, price: Numbers): Steps<Int32Array> {
  // Sorted by the least significant key first, each sort stable, so that the order added breaks the last ties.
  let addedByRow: Int32Array = new Int32Array(area.length);
  for (let rowId = 0; rowId < area.length; rowId++) addedByRow[rowId] = rowId;
  for (const values of [price, bedrooms, area]) {
    addedByRow = stableByRank(addedByRow, numberRanks(values));
    yield;
  }
  return addedByRow;
}

/** The ranges of rows of one area and one bedroom count: by area id, and of the listings in no area (after every area's). */
export function rowRangesOf(area: Numbers, bedrooms: Numbers): { areaRowRanges: Map<number, RowRange[]>; unplacedRowRanges: RowRange[] } {
  // NaN (unknown) is equal to itself here.
  const same = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));
  const areaRowRanges = new Map<number, RowRange[]>();
  const unplacedRowRanges: RowRange[] = [];
  for (let start = 0; start < area.length; ) {
    const [id, beds] = [area[start], bedrooms[start]];
    let end = start + 1;
    while (end < area.length && same(area[end], id) && same(bedrooms[end], beds)) end++;
    const ranges = Number.isNaN(id) ? unplacedRowRanges : (areaRowRanges.get(id) ?? areaRowRanges.set(id, []).get(id)!);
    ranges.push({ start, end });
    start = end;
  }
  return { areaRowRanges, unplacedRowRanges };
}

/**
 * The rows of `range` whose price is within [min, max]: a range, since the rows of an area's listings of one bedroom
 * count go by price (unknown last, and never within a range).
 */
export function priceRowRange(price: Numbers, range: RowRange, min: number, max: number): RowRange {
  // Binary searches for the first row whose price is not below `min`, and the first above `max` (or unknown).
  let [lo, hi] = [range.start, range.end];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (price[mid] < min) lo = mid + 1;
    else hi = mid;
  }
  const start = lo;
  hi = range.end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (price[mid] <= max) lo = mid + 1;
    else hi = mid;
  }
  return { start, end: lo };
}

/**
 * A number column's values as ranks: 0 to `count - 1` for the distinct known values ascending, `count` for unknown
 * (NaN), which so comes last.
 */
export function numberRanks(values: Numbers): { ranks: Codes; count: number } {
  const known = Float64Array.from(values.filter((v) => !Number.isNaN(v))).sort();
  const distinct = known.filter((v, i) => i === 0 || v !== known[i - 1]);
  const ranks = codesFor(distinct.length, values.length);
  for (let rowId = 0; rowId < values.length; rowId++) {
    const value = values[rowId];
    if (Number.isNaN(value)) {
      ranks[rowId] = distinct.length;
      continue;
    }
    let [lo, hi] = [0, distinct.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (distinct[mid] < value) lo = mid + 1;
      else hi = mid;
    }
    ranks[rowId] = lo;
  }
  return { ranks, count: distinct.length };
}

/** `rowIds` sorted by their `ranks` (0 to `count`), ties kept in the order given: a counting sort, linear in the rows. */
function stableByRank(rowIds: Int32Array, { ranks, count }: { ranks: Codes; count: number }): Int32Array {
  const starts = new Int32Array(count + 2);
  for (const rowId of rowIds) starts[ranks[rowId] + 1]++;
  for (let rank = 1; rank < starts.length; rank++) starts[rank] += starts[rank - 1];
  const sorted = new Int32Array(rowIds.length);
  for (const rowId of rowIds) sorted[starts[ranks[rowId]]++] = rowId;
  return sorted;
}
