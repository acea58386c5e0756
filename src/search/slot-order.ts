/**
 * The order of the search index's slots (listing-columns.ts): a kind's listings numbered by area, then bedroom count,
 * then price (unknown last each time), then the order they were added, so that the listings of an area and a bedroom
 * count are one run of slots, and a price range within it one run too.
 */

import { codesFor, type Codes, type Floats as Numbers } from '../lib/narrow-arrays.js';
import type { Steps } from '../lib/stepwise.js';

/** Slots `start` to `end - 1`. */
export interface SlotRun {
  readonly start: number;
  readonly end: number;
}

/**
 * The order of the listings added (numbered 0 to n - 1 as added) by area, then bedrooms, then price, unknown last
 * each time, ties in the order added: `slotAdded[slot]` is the listing (as added) that takes `slot`. In steps, one a key.
 */
export function* slotsByAreaBedroomsPrice(area: Numbers, bedrooms: Numbers, price: Numbers): Steps<Int32Array> {
  // Sorted by the least significant key first, each sort stable, so that the order added breaks the last ties.
  let slotAdded: Int32Array = new Int32Array(area.length);
  for (let slot = 0; slot < area.length; slot++) slotAdded[slot] = slot;
  for (const values of [price, bedrooms, area]) {
    slotAdded = stableByRank(slotAdded, numberRanks(values));
    yield;
  }
  return slotAdded;
}

/** The runs of slots of one area and one bedroom count: by area id, and of the listings in no area (after every area's). */
export function slotRuns(area: Numbers, bedrooms: Numbers): { areaSlots: Map<number, SlotRun[]>; unplacedSlots: SlotRun[] } {
  // NaN (unknown) is equal to itself here.
  const same = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));
  const areaSlots = new Map<number, SlotRun[]>();
  const unplacedSlots: SlotRun[] = [];
  for (let start = 0; start < area.length; ) {
    const [id, beds] = [area[start], bedrooms[start]];
    let end = start + 1;
    while (end < area.length && same(area[end], id) && same(bedrooms[end], beds)) end++;
    const runs = Number.isNaN(id) ? unplacedSlots : (areaSlots.get(id) ?? areaSlots.set(id, []).get(id)!);
    runs.push({ start, end });
    start = end;
  }
  return { areaSlots, unplacedSlots };
}

/**
 * The slots of `run` whose price is within [min, max]: a run, since the slots of an area's listings of one bedroom
 * count go by price (unknown last, and never within a range).
 */
export function priceRun(price: Numbers, run: SlotRun, min: number, max: number): SlotRun {
  // Binary searches for the first slot whose price is not below `min`, and the first above `max` (or unknown).
  let [lo, hi] = [run.start, run.end];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (price[mid] < min) lo = mid + 1;
    else hi = mid;
  }
  const start = lo;
  hi = run.end;
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
  for (let slot = 0; slot < values.length; slot++) {
    const value = values[slot];
    if (Number.isNaN(value)) {
      ranks[slot] = distinct.length;
      continue;
    }
    let [lo, hi] = [0, distinct.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (distinct[mid] < value) lo = mid + 1;
      else hi = mid;
    }
    ranks[slot] = lo;
  }
  return { ranks, count: distinct.length };
}

/** `slots` sorted by their `ranks` (0 to `count`), ties kept in the order given: a counting sort, linear in the slots. */
function stableByRank(slots: Int32Array, { ranks, count }: { ranks: Codes; count: number }): Int32Array {
  const starts = new Int32Array(count + 2);
  for (const slot of slots) starts[ranks[slot] + 1]++;
  for (let rank = 1; rank < starts.length; rank++) starts[rank] += starts[rank - 1];
  const sorted = new Int32Array(slots.length);
  for (const slot of slots) sorted[starts[ranks[slot]]++] = slot;
  return sorted;
}
