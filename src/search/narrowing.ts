import type { ListingColumns, NumberColumn } from './listing-columns.js';
import type { SearchContext } from './listing-search.js';

/**
 * How the search index keeps the listings that match one filter: `narrow` keeps those of `slots[0..n)` that
 * match, in place and in their order, and says how many it kept; `from`, when set, holds exactly the slots
 * `narrow` keeps (an area's listings, each once), so that a search starts from them, rather than from every
 * listing of its kind, and skips that narrowing.
 */
export interface Narrowing {
  from?: readonly Int32Array[];
  narrow(slots: Int32Array, n: number): number;
}

/**
 * A filter in the search index: its narrowing for a value, read from the kind's columns, or null when only
 * the store answers a search that sets it (a point and radius, whose great-circle distance the store computes).
 */
export type InMemory<V> = ((columns: ListingColumns, value: V, ctx: SearchContext) => Narrowing) | null;

/**
 * Keeps listings whose value in `column` is within [min, max]; NaN (unknown) and -1 (a text column's null rank) never
 * are when min >= 0. One loop written out for each kind of array: V8 keeps what it learns of a loop's array reads per
 * function literal, and one loop shared by three kinds of array read each element about ten times slower.
 */
export function inRange(column: NumberColumn | Int32Array, min: number, max: number): Narrowing {
  if (column instanceof Float32Array) {
    return {
      narrow(slots, n) {
        let kept = 0;
        for (let i = 0; i < n; i++) {
          const slot = slots[i];
          const value = column[slot];
          // Without a branch: the slot is written in any case and kept when it matches (a branch on data this
          // random is mispredicted about half the time, which cost twice the loop).
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
          // Without a branch: the slot is written in any case and kept when it matches (a branch on data this
          // random is mispredicted about half the time, which cost twice the loop).
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
  if (!bits) return { narrow: () => 0 };
  return {
    narrow(slots, n) {
      let kept = 0;
      for (let i = 0; i < n; i++) {
        const slot = slots[i];
        slots[kept] = slot;
        kept += (bits[slot >>> 5] >>> (slot & 31)) & 1;
      }
      return kept;
    },
  };
}

/** Keeps listings whose value in `column` is one of `values` (numbers; a text column's ranks). */
export function oneOf(column: NumberColumn | Int32Array, values: readonly number[]): Narrowing {
  if (values.length === 1) return inRange(column, values[0], values[0]);
  const wanted = new Set(values);
  return passing((slot) => wanted.has(column[slot]));
}

/** Keeps the listings of a yes/no column (1 yes, 0 no, null unknown): yes is 1, no is unknown or 0, as the store's filter. */
export function yesOrNo(column: NumberColumn, yes: boolean): Narrowing {
  return yes ? inRange(column, 1, 1) : passing((slot) => !(column[slot] === 1));
}

/** Keeps listings that every one of `narrowings` keeps (none: every listing). */
export function allOf(narrowings: readonly Narrowing[]): Narrowing {
  return {
    narrow(slots, n) {
      for (const narrowing of narrowings) n = narrowing.narrow(slots, n);
      return n;
    },
  };
}
