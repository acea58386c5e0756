import { boundingBox, outlineContains, type Outline } from '../domain/outline.js';
import { Decimals, isFloats } from '../lib/narrow-arrays.js';
import type { ListingColumns, NumberColumn } from './listing-columns.js';
import type { SearchContext } from './listing-search.js';

/**
 * How the search index keeps the listings that match one filter: `narrow` keeps those of `slots[0..n)` that
 * match, in place and in their order, and says how many it kept; `areas`, when set, says that it keeps exactly
 * the listings of these areas (each id once), so that a search starts from their runs of slots
 * (`ListingColumns.areaSlots`), rather than from every listing of its kind, and skips that narrowing.
 */
export interface Narrowing {
  areas?: readonly number[];
  narrow(slots: Int32Array, n: number): number;
  /** Set when the narrowing keeps `column`'s values within [min, max] ({@link inRange}): two on one column become one pass. */
  range?: { column: NumberColumn | Decimals; min: number; max: number };
  /** Set when the narrowing keeps what every one of these keeps ({@link allOf}): each then takes its own place in the order. */
  parts?: readonly Narrowing[];
}

/**
 * A filter in the search index: its narrowing for a value, read from the kind's columns, or null when only
 * the store answers a search that sets it (a point and radius, whose great-circle distance the store computes).
 */
export type InMemory<V> = ((columns: ListingColumns, value: V, ctx: SearchContext) => Narrowing) | null;

/**
 * Keeps listings whose value in `column` is within [min, max]; unknown values never are: NaN in a column of floats, any
 * negative value in a column of codes (-1, a whole number's unknown or a text's null), whose `min` is raised to 0, and
 * the unknown's units among decimals, whose bounds become units ({@link Decimals.unitsWithin}).
 * One loop written out for each kind of array: V8 keeps what it learns of a loop's array reads per function literal,
 * and one loop shared by three kinds of array read each element about ten times slower.
 */
export function inRange(column: NumberColumn | Decimals, min: number, max: number): Narrowing {
  if (column instanceof Decimals) {
    // The bounds as units (the unknown's below every one): the Int32 loop over the units.
    const [lowUnit, highUnit] = column.unitsWithin(min, max);
    return { ...rangeLoop(column.units, lowUnit, highUnit), range: { column, min, max } };
  }
  const low = isFloats(column) ? min : Math.max(0, min);
  return { ...rangeLoop(column, low, max), range: { column, min: low, max } };
}

/**
 * The loop of {@link inRange}. Without a branch: the slot is written in any case and kept when it matches (a branch on
 * data this random is mispredicted about half the time, which cost twice the loop).
 */
function rangeLoop(column: NumberColumn, min: number, max: number): Narrowing {
  if (column instanceof Float32Array) {
    return {
      narrow(slots, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const slot = slots[i];
          const value = column[slot];
          slots[kept] = slot;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  if (column instanceof Float64Array) {
    return {
      narrow(slots, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const slot = slots[i];
          const value = column[slot];
          slots[kept] = slot;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  if (column instanceof Int8Array) {
    return {
      narrow(slots, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const slot = slots[i];
          const value = column[slot];
          slots[kept] = slot;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  if (column instanceof Int16Array) {
    return {
      narrow(slots, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const slot = slots[i];
          const value = column[slot];
          slots[kept] = slot;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  return {
    narrow(slots, n) {
      let kept = 0;
      for (let i = 0; i < n; i++) {
        const slot = slots[i];
        const value = column[slot];
        slots[kept] = slot;
        kept += +(value >= min) & +(value <= max);
      }
      return kept;
    },
  };
}

/** Keeps listings that pass `test` (by slot): for filters rarer than a range. */
export function passing(test: (slot: number) => boolean): Narrowing {
  return {
    narrow(slots, n) {
      let kept = 0;
      for (let i = 0; i < n; i++) if (test(slots[i])) slots[kept++] = slots[i];
      return kept;
    },
  };
}

/** Keeps listings whose bit is set in `bits` (a bit set by slot). */
export function inBits(bits: Uint32Array | undefined): Narrowing {
  return bits ? bitLoop(bits, 0) : { narrow: () => 0 };
}

/** Keeps listings whose bit is not set in `bits` (a bit set by slot): those not written since the columns were built. */
export function outsideBits(bits: Uint32Array): Narrowing {
  return bitLoop(bits, 1);
}

/** The loop of {@link inBits} and {@link outsideBits}: keeps a slot when its bit, flipped by `flip` (0 or 1), is set. */
function bitLoop(bits: Uint32Array, flip: 0 | 1): Narrowing {
  return {
    narrow(slots, n) {
      let kept = 0;
      for (let i = 0; i < n; i++) {
        const slot = slots[i];
        slots[kept] = slot;
        kept += ((bits[slot >>> 5] >>> (slot & 31)) & 1) ^ flip;
      }
      return kept;
    },
  };
}

/** Keeps listings whose value in `column` is one of `values` (numbers; a text column's ranks), never an unknown one ({@link inRange}). */
export function oneOf(column: NumberColumn, values: readonly number[]): Narrowing {
  if (values.length === 1) return inRange(column, values[0], values[0]);
  const wanted = new Set(isFloats(column) ? values : values.filter((v) => v >= 0));
  return passing((slot) => wanted.has(column[slot]));
}

/** Keeps the listings of a yes/no column (1 yes, 0 no, null unknown): yes is 1, no is unknown or 0, as the store's filter. */
export function yesOrNo(column: NumberColumn, yes: boolean): Narrowing {
  return yes ? inRange(column, 1, 1) : passing((slot) => !(column[slot] === 1));
}

/** Keeps listings that every one of `narrowings` keeps (none: every listing). */
export function allOf(narrowings: readonly Narrowing[]): Narrowing {
  return {
    parts: narrowings,
    narrow(slots, n) {
      for (const narrowing of narrowings) n = narrowing.narrow(slots, n);
      return n;
    },
  };
}

/**
 * The same matches as `narrowings` applied one after the other, in fewer passes: every {@link allOf} taken apart, and
 * the ranges on one column made one range (the values within both bounds of each).
 */
export function fused(narrowings: readonly Narrowing[]): Narrowing[] {
  const flat = narrowings.flatMap(function flatten(n): Narrowing[] {
    return n.parts ? n.parts.flatMap(flatten) : [n];
  });
  const ranges = new Map<NumberColumn | Decimals, { min: number; max: number }>();
  const rest: Narrowing[] = [];
  for (const narrowing of flat) {
    if (!narrowing.range) {
      rest.push(narrowing);
      continue;
    }
    const { column, min, max } = narrowing.range;
    const seen = ranges.get(column);
    ranges.set(column, seen ? { min: Math.max(seen.min, min), max: Math.min(seen.max, max) } : { min, max });
  }
  return [...[...ranges].map(([column, { min, max }]) => inRange(column, min, max)), ...rest];
}

/** Slots a narrowing is tried on to guess how many it keeps ({@link mostSelectiveFirst}). */
const SAMPLE = 256;
const sample = new Int32Array(SAMPLE);

/**
 * `narrowings` in the order that keeps the fewest slots soonest: each is tried on up to 256 of `slots[0..n)`, evenly
 * spaced, and those that keep fewer go first, so that the later passes read fewer slots. The matches are the same in
 * any order; only the work differs.
 */
export function mostSelectiveFirst(narrowings: readonly Narrowing[], slots: Int32Array, n: number): Narrowing[] {
  if (narrowings.length < 2 || n <= SAMPLE) return [...narrowings];
  const step = n / SAMPLE;
  const kept = narrowings.map((narrowing) => {
    for (let i = 0; i < SAMPLE; i++) sample[i] = slots[Math.floor(i * step)];
    return { narrowing, kept: narrowing.narrow(sample, SAMPLE) };
  });
  return kept.sort((a, b) => a.kept - b.kept).map((k) => k.narrowing);
}

/**
 * Listings inside `polygon` (its edge included), as the store's polygon search: a listing with no position (NaN
 * degrees from `positions`) is in none.
 */
export function insideOutline(
  polygon: Outline,
  positions: [latitude: (slot: number) => number, longitude: (slot: number) => number],
): Narrowing {
  const box = boundingBox(polygon);
  const [latitudes, longitudes] = positions;
  return passing((slot) => {
    const [latitude, longitude] = [latitudes(slot), longitudes(slot)];
    return !Number.isNaN(latitude) && !Number.isNaN(longitude) && outlineContains(polygon, { latitude, longitude }, box);
  });
}
