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

/** Units of {@link Decimals} that stand for an unknown number (NaN): the least Int32, below every bound. */
const UNKNOWN_UNITS = -(2 ** 31);
/** The scales tried by {@link exactDecimals}: whole numbers, then one to six decimals. */
const SCALES = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];

/**
 * Numbers each written with a few decimals (degrees to six places as the listing sites give them, 40.760471; a percent
 * to one), kept as whole units of `1 / scale` in an Int32Array, 4 bytes where a double takes 8: `at(i)` is
 * `units[i] / scale`, the very double given (NaN for unknown).
 */
export class Decimals {
  constructor(
    readonly units: Int32Array,
    readonly scale: number,
  ) {}

  /** Number `index`, as given (NaN when unknown). */
  at(index: number): number {
    const unit = this.units[index];
    return unit === UNKNOWN_UNITS ? Number.NaN : unit / this.scale;
  }

  /**
   * The least and the greatest units whose numbers lie within [min, max] (bounds as doubles, infinite ones allowed;
   * the first above the second when none do), never the unknown's: a range over numbers made a range over units.
   */
  unitsWithin(min: number, max: number): [low: number, high: number] {
    const clamp = (unit: number) => Math.min(2 ** 31 - 1, Math.max(UNKNOWN_UNITS + 1, unit));
    // Division by the scale is monotonic: step from the rounded bound to the first unit on the right side of it.
    let low = clamp(Math.ceil(min * this.scale));
    while (low > UNKNOWN_UNITS + 1 && (low - 1) / this.scale >= min) low--;
    while (low < 2 ** 31 - 1 && low / this.scale < min) low++;
    let high = clamp(Math.floor(max * this.scale));
    while (high < 2 ** 31 - 1 && (high + 1) / this.scale <= max) high++;
    while (high > UNKNOWN_UNITS + 1 && high / this.scale > max) high--;
    if (low / this.scale < min) return [1, 0];
    if (high / this.scale > max) return [1, 0];
    return [low, high];
  }
}

/**
 * `values` as {@link Decimals} at the smallest scale (1, 10, ... 1,000,000) at which every one reads back as the same
 * double (NaN as unknown; a negative zero never does), within the Int32 range; null when there is none.
 */
export function exactDecimals(values: ArrayLike<number>): Decimals | null {
  const units = new Int32Array(values.length);
  scales: for (const scale of SCALES) {
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (Number.isNaN(value)) {
        units[i] = UNKNOWN_UNITS;
        continue;
      }
      const unit = Math.round(value * scale);
      if (!(unit > UNKNOWN_UNITS && unit < 2 ** 31)) continue scales;
      units[i] = unit;
      if (!Object.is(units[i] / scale, value)) continue scales;
    }
    return new Decimals(units, scale);
  }
  return null;
}

/** Doubles by place: as given, or as {@link Decimals} where they read back the same. */
export type ExactDoubles = Float64Array | Decimals;

/** `values` as {@link Decimals} when {@link exactDecimals} keeps them, else as doubles. */
export function exactDoubles(values: ArrayLike<number>): ExactDoubles {
  return exactDecimals(values) ?? Float64Array.from(values);
}

/** Numbers held as floats or as {@link Decimals}: what {@link doubleAt} and {@link readerOf} read. */
export type Doubles = Floats | Decimals;

/** Number `index` of `values` (NaN when unknown). */
export const doubleAt = (values: Doubles, index: number): number => (values instanceof Decimals ? values.at(index) : values[index]);

/** A reader of `values`' numbers by index (NaN when unknown), chosen once for its kind: for a loop over many. */
export const readerOf = (values: Doubles): ((index: number) => number) =>
  values instanceof Decimals ? (index) => values.at(index) : (index) => values[index];
