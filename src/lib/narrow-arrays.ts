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

/**
 * Numbers each written with at most six decimals (degrees as the listing sites give them: 40.760471), kept as whole
 * millionths in an Int32Array, 4 bytes where a double takes 8: `at(i)` is `units[i] / 1e6`, the very double given.
 */
export class Millionths {
  constructor(private readonly units: Int32Array) {}

  /** Number `index`, as given. */
  at(index: number): number {
    return this.units[index] / 1e6;
  }
}

/** Numbers by place: doubles, or {@link Millionths} where every one of them is one (read back the same). */
export type Positions = Float64Array | Millionths;

/**
 * `values` as {@link Millionths} when each is a number of millionths, within ±2,147 (a latitude or longitude), that
 * `units / 1e6` gives back exactly; else as doubles.
 */
export function exactPositions(values: ArrayLike<number>): Positions {
  const units = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const unit = Math.round(values[i] * 1e6);
    units[i] = unit;
    // Read back as it will be (a negative zero, a NaN or a seventh decimal would not be).
    if (!(Math.abs(unit) < 2 ** 31 && Object.is(units[i] / 1e6, values[i]))) return Float64Array.from(values);
  }
  return new Millionths(units);
}

/** Number `index` of `values`. */
export const positionAt = (values: Positions, index: number): number => (values instanceof Float64Array ? values[index] : values.at(index));
