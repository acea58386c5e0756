/**
 * Typed arrays no wider than their values need: columns of a million listings held in memory (the search index, the
 * estimates' comparables) take a quarter or half the bytes where their values allow, with every value unchanged.
 */

/** Numbers with NaN for unknown: single precision where every value is exactly one, else double. */
export type Floats = Float32Array | Float64Array;

/** Whole numbers from -1 up (codes, ranks; -1 for none): the narrowest signed array that holds them. */
export type Codes = Int8Array | Int16Array | Int32Array;

/**
 * `values` in single precision when each is exactly a single-precision number or NaN (small whole numbers: counts,
 * scores, rents in dollars), else in double precision (degrees, large prices). The values read back are the same.
 */
export function exactFloats(values: ArrayLike<number>): Floats {
  return fitsSingle(values) ? Float32Array.from(values) : Float64Array.from(values);
}

/** Whether every one of `values` is NaN or exactly a single-precision number. */
export function fitsSingle(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isNaN(v) && Math.fround(v) !== v) return false;
  }
  return true;
}

/** Whether `values` are floats (NaN for unknown) rather than codes (negative for unknown). */
export const isFloats = (values: Floats | Codes): values is Floats => values instanceof Float32Array || values instanceof Float64Array;

/** An empty array for `length` codes from -1 to `largest`: one byte each up to 127, two up to 32,767, else four. */
export function codesFor(largest: number, length: number): Codes {
  return largest < 128 ? new Int8Array(length) : largest < 32768 ? new Int16Array(length) : new Int32Array(length);
}

/** `values` (whole numbers from -1 up) in the narrowest array that holds them ({@link codesFor}). */
export function exactCodes(values: readonly number[]): Codes {
  let largest = -1;
  for (const v of values) largest = Math.max(largest, v);
  const codes = codesFor(largest, values.length);
  codes.set(values);
  return codes;
}
