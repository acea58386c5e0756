import { boundingBox, outlineContains, type Outline } from '../domain/outline.js';
import { Decimals, isFloats } from '../lib/narrow-arrays.js';
import type { ListingColumns, NumberColumn } from './listing-columns.js';
import type { SearchContext } from './listing-search.js';

/**
 * How the search index keeps the listings that match one filter: `keepMatches` keeps those of `rowIds[0..n)` that
 * match, in place and in their order, and says how many it kept; `areas`, when set, says that it keeps exactly
 * the listings of these areas (each id once), so that a search starts from their ranges of rows
 * (`ListingColumns.areaRowRanges`), rather than from every listing of its kind, and skips that candidate filter.
 */
export interface CandidateFilter {
  areas?: readonly number[];
  keepMatches(rowIds: Int32Array, n: number): number;
  /** Set when the candidate filter keeps `column`'s values within [min, max] ({@link inRange}): two on one column become one pass. */
  range?: { column: NumberColumn | Decimals; min: number; max: number };
  /** Set when the candidate filter keeps what every one of these keeps ({@link allOf}): each then takes its own place in the order. */
  parts?: readonly CandidateFilter[];
}

/**
 * A filter in the search index: its candidate filter for a value, read from the kind's columns, or null when only
 * the store answers a search that sets it (a polygon's `ids`: the index tests the polygon itself).
 */
export type InMemory<V> = ((columns: ListingColumns, value: V, ctx: SearchContext) => CandidateFilter) | null;

/**
 * Keeps listings whose value in `column` is within [min, max]; unknown values never are: NaN in a column of floats, any
 * negative value in a column of codes (-1, a whole number's unknown or a text's null), whose `min` is raised to 0, and
 * the unknown's units among decimals, whose bounds become units ({@link Decimals.unitsWithin}).
 * One loop written out for each kind of array: V8 keeps what it learns of a loop's array reads per function literal,
 * and one loop shared by three kinds of array read each element about ten times slower.
 */
export function inRange(column: NumberColumn | Decimals, min: number, max: number): CandidateFilter {
  if (column instanceof Decimals) {
    // The bounds as units (the unknown's below every one): the Int32 loop over the units.
    const [lowUnit, highUnit] = column.unitsWithin(min, max);
    return { ...rangeLoop(column.units, lowUnit, highUnit), range: { column, min, max } };
  }
  const low = isFloats(column) ? min : Math.max(0, min);
  return { ...rangeLoop(column, low, max), range: { column, min: low, max } };
}

/**
 * The loop of {@link inRange}. Without a branch: the row is written in any case and kept when it matches (a branch on
 * data this random is mispredicted about half the time, which cost twice the loop).
 */
function rangeLoop(column: NumberColumn, min: number, max: number): CandidateFilter {
  if (column instanceof Float32Array) {
    return {
      keepMatches(rowIds, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const rowId = rowIds[i];
          const value = column[rowId];
          rowIds[kept] = rowId;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  if (column instanceof Float64Array) {
    return {
      keepMatches(rowIds, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const rowId = rowIds[i];
          const value = column[rowId];
          rowIds[kept] = rowId;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  if (column instanceof Int8Array) {
    return {
      keepMatches(rowIds, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const rowId = rowIds[i];
          const value = column[rowId];
          rowIds[kept] = rowId;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  if (column instanceof Int16Array) {
    return {
      keepMatches(rowIds, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const rowId = rowIds[i];
          const value = column[rowId];
          rowIds[kept] = rowId;
          kept += +(value >= min) & +(value <= max);
        }
        return kept;
      },
    };
  }
  return {
    keepMatches(rowIds, n) {
      let kept = 0;
      for (let i = 0; i < n; i++) {
        const rowId = rowIds[i];
        const value = column[rowId];
        rowIds[kept] = rowId;
        kept += +(value >= min) & +(value <= max);
      }
      return kept;
    },
  };
}

/** Keeps listings that pass `test` (by row): for filters rarer than a range. */
export function passing(test: (rowId: number) => boolean): CandidateFilter {
  return {
    keepMatches(rowIds, n) {
      let kept = 0;
      for (let i = 0; i < n; i++) if (test(rowIds[i])) rowIds[kept++] = rowIds[i];
      return kept;
    },
  };
}

/** Keeps listings whose bit is set in `bits` (a bit set by row). */
export function inBits(bits: Uint32Array | undefined): CandidateFilter {
  return bits ? bitLoop(bits, 0) : { keepMatches: () => 0 };
}

/** Keeps listings whose bit is not set in `bits` (a bit set by row): those not written since the columns were built. */
export function outsideBits(bits: Uint32Array): CandidateFilter {
  return bitLoop(bits, 1);
}

/** The loop of {@link inBits} and {@link outsideBits}: keeps a row when its bit, flipped by `flip` (0 or 1), is set. */
function bitLoop(bits: Uint32Array, flip: 0 | 1): CandidateFilter {
  return {
    keepMatches(rowIds, n) {
      let kept = 0;
      for (let i = 0; i < n; i++) {
        const rowId = rowIds[i];
        rowIds[kept] = rowId;
        kept += ((bits[rowId >>> 5] >>> (rowId & 31)) & 1) ^ flip;
      }
      return kept;
    },
  };
}

/** Keeps listings whose value in `column` is one of `values` (numbers; a text column's ranks), never an unknown one ({@link inRange}). */
export function oneOf(column: NumberColumn, values: readonly number[]): CandidateFilter {
  if (values.length === 1) return inRange(column, values[0], values[0]);
  const wanted = new Set(isFloats(column) ? values : values.filter((v) => v >= 0));
  return passing((rowId) => wanted.has(column[rowId]));
}

/** Keeps the listings of a yes/no column (1 yes, 0 no, null unknown): yes is 1, no is unknown or 0, as the store's filter. */
export function yesOrNo(column: NumberColumn, yes: boolean): CandidateFilter {
  return yes ? inRange(column, 1, 1) : passing((rowId) => !(column[rowId] === 1));
}

/** Keeps listings that every one of `candidateFilters` keeps (none: every listing). */
export function allOf(candidateFilters: readonly CandidateFilter[]): CandidateFilter {
  return {
    parts: candidateFilters,
    keepMatches(rowIds, n) {
      for (const candidateFilter of candidateFilters) n = candidateFilter.keepMatches(rowIds, n);
      return n;
    },
  };
}

/**
 * The same matches as `candidateFilters` applied one after the other, in fewer passes: every {@link allOf} taken apart, and
 * the ranges on one column made one range (the values within both bounds of each).
 */
export function fused(candidateFilters: readonly CandidateFilter[]): CandidateFilter[] {
  const flat = candidateFilters.flatMap(function flatten(n): CandidateFilter[] {
    return n.parts ? n.parts.flatMap(flatten) : [n];
  });
  const ranges = new Map<NumberColumn | Decimals, { min: number; max: number }>();
  const rest: CandidateFilter[] = [];
  for (const candidateFilter of flat) {
    if (!candidateFilter.range) {
      rest.push(candidateFilter);
      continue;
    }
    const { column, min, max } = candidateFilter.range;
    const seen = ranges.get(column);
    ranges.set(column, seen ? { min: Math.max(seen.min, min), max: Math.min(seen.max, max) } : { min, max });
  }
  return [...[...ranges].map(([column, { min, max }]) => inRange(column, min, max)), ...rest];
}

/** Rows a candidate filter is tried on to guess how many it keeps ({@link mostSelectiveFirst}). */
const SAMPLE = 256;
const sample = new Int32Array(SAMPLE);

/**
 * `candidateFilters` in the order that keeps the fewest rows soonest: each is tried on up to 256 of `rowIds[0..n)`, evenly
 * spaced, and those that keep fewer go first, so that the later passes read fewer rows. The matches are the same in
 * any order; only the work differs.
 */
export function mostSelectiveFirst(candidateFilters: readonly CandidateFilter[], rowIds: Int32Array, n: number): CandidateFilter[] {
  if (candidateFilters.length < 2 || n <= SAMPLE) return [...candidateFilters];
  const step = n / SAMPLE;
  const kept = candidateFilters.map((candidateFilter) => {
    for (let i = 0; i < SAMPLE; i++) sample[i] = rowIds[Math.floor(i * step)];
    return { candidateFilter, kept: candidateFilter.keepMatches(sample, SAMPLE) };
  });
  return kept.sort((a, b) => a.kept - b.kept).map((k) => k.candidateFilter);
}

/**
 * Listings inside `polygon` (its edge included), as the store's polygon search: a listing with no position (NaN
 * degrees from `positions`) is in none.
 */
export function insideOutline(
  polygon: Outline,
  positions: [latitude: (rowId: number) => number, longitude: (rowId: number) => number],
): CandidateFilter {
  const box = boundingBox(polygon);
  const [latitudes, longitudes] = positions;
  return passing((rowId) => {
    const [latitude, longitude] = [latitudes(rowId), longitudes(rowId)];
    return !Number.isNaN(latitude) && !Number.isNaN(longitude) && outlineContains(polygon, { latitude, longitude }, box);
  });
}
