import { codesFor, type Decimals, exactDecimals, fitsSingle, type Codes } from '../lib/narrow-arrays.js';
import { runNow, type Steps } from '../lib/stepwise.js';
import { TextList } from '../lib/text-list.js';
import { PathList } from '../lib/path-list.js';
import { rowRangesOf, rowsByAreaBedroomsPrice } from './row-order.js';
import { TextRanks } from './text-ranks.js';
import {
  isDecimalColumn,
  isWholeNumberColumn,
  type NumberColumn,
  type NumberColumns,
  type TextCodes,
  type IndexedRow,
  type ListingColumns,
  NUMERIC_COLUMNS,
  type NumericColumn,
  SHOWN_TEXT_COLUMNS,
  type ShownTextColumn,
  TEXT_COLUMNS,
  type TextColumn,
} from './listing-columns.js';

/**
 * Gathers one kind's listings, a chunk of rows at a time, straight into columns (no row is kept: at a million
 * listings the rows would take several times the columns' memory), then their amenities.
 */
export class ColumnsBuilder {
  private size = 0;
  private numbers: Record<NumericColumn, Float64Array>;
  private readonly texts = Object.fromEntries(TEXT_COLUMNS.map((c) => [c, new CodesBuilder()])) as Record<TextColumn, CodesBuilder>;
  private readonly shown = Object.fromEntries(SHOWN_TEXT_COLUMNS.map((c) => [c, new CodesBuilder()])) as Record<
    ShownTextColumn,
    CodesBuilder
  >;
  private readonly amenityBits = new Map<string, Uint32Array>();

  /** @param expected about how many listings will come (more may: the columns grow). */
  constructor(expected: number) {
    this.numbers = Object.fromEntries(NUMERIC_COLUMNS.map((c) => [c, new Float64Array(Math.max(16, expected))])) as Record<
      NumericColumn,
      Float64Array
    >;
  }

  /** Adds listings (each id once). */
  add(rows: readonly IndexedRow[]): void {
    if (this.size + rows.length > this.numbers.price.length) {
      const capacity = Math.max(this.size + rows.length, this.numbers.price.length * 2);
      for (const c of NUMERIC_COLUMNS) {
        const grown = new Float64Array(capacity);
        grown.set(this.numbers[c]);
        this.numbers[c] = grown;
      }
    }
    for (const row of rows) {
      for (const c of NUMERIC_COLUMNS) this.numbers[c][this.size] = row[c] ?? Number.NaN;
      for (const c of TEXT_COLUMNS) this.texts[c].add(c === 'open_house_until' ? (row.open_house_end ?? row.open_house_start) : row[c]);
      for (const c of SHOWN_TEXT_COLUMNS) this.shown[c].add(row[c]);
      this.size++;
    }
  }

  /** Adds amenities of listings added before (others are passed over: a listing that is not active, or of the other kind). */
  addAmenities(rows: Iterable<{ listing_id: string; amenity: string }>): void {
    for (const { listing_id, amenity } of rows) {
      const rowId = this.addedByRow(listing_id);
      if (rowId === undefined) continue;
      let bits = this.amenityBits.get(amenity);
      if (!bits) {
        bits = new Uint32Array((this.size >>> 5) + 1);
        this.amenityBits.set(amenity, bits);
      }
      bits[rowId >>> 5] |= 1 << (rowId & 31);
    }
  }

  /** The row listing `id` was added at; undefined when it was not. */
  private addedByRow(id: string): number | undefined {
    // Each id is new (a listing is added once): its code is the row it was added at.
    return this.texts.id.codeOf(id);
  }

  /**
   * The columns of every listing added, renumbered by area, then bedrooms, then price (unknown last each time), then
   * the order added: the listings of an area and a bedroom count are then one range of rows, and a price range within it
   * one range.
   */
  finish(): ListingColumns {
    return runNow(this.finishing());
  }

  /** {@link finish} in steps: a pause after each column ({@link Steps}). */
  *finishing(): Steps<ListingColumns> {
    const at = (c: NumericColumn) => this.numbers[c].subarray(0, this.size);
    // `addedByRow[rowId]`: the row the listing had when added.
    const addedByRow = yield* rowsByAreaBedroomsPrice(at('area_id'), at('bedroom_count'), at('price'));
    const rowNow = new Int32Array(this.size);
    for (let rowId = 0; rowId < this.size; rowId++) rowNow[addedByRow[rowId]] = rowId;
    // Loops rather than TypedArray.from with a function, which took seconds at a million listings.
    // One loop for each kind of array: a loop shared by two kinds reads each element many times slower (candidate-filters.ts).
    // Each column is written once, straight into the kind it keeps: a copy in double precision first took 8 bytes a
    // listing a column more at the build's peak.
    const permutedDoubles = (values: Float64Array): Float64Array => {
      const out = new Float64Array(addedByRow.length);
      for (let rowId = 0; rowId < addedByRow.length; rowId++) out[rowId] = values[addedByRow[rowId]];
      return out;
    };
    const permutedSingles = (values: Float64Array): Float32Array => {
      const out = new Float32Array(addedByRow.length);
      for (let rowId = 0; rowId < addedByRow.length; rowId++) out[rowId] = values[addedByRow[rowId]];
      return out;
    };
    const permutedCodes = ({ codes, values }: CodesBuilder, idAt: (rowId: number) => string): TextCodes => {
      if (values.length === addedByRow.length) {
        // Each listing's own value (no null among them: a URL path): kept in row order, without codes, as paths
        // whose last segment is mostly the listing's id (lib/path-list.ts).
        return {
          codes: null,
          values: PathList.of(
            Array.from(addedByRow, (added) => values[codes[added]]),
            idAt,
          ),
        };
      }
      const out = codesFor(values.length - 1, addedByRow.length);
      for (let rowId = 0; rowId < addedByRow.length; rowId++) out[rowId] = codes[addedByRow[rowId]];
      return { codes: out, values: TextList.of(values) };
    };
    const permutedWhole = (values: Float64Array): Codes => {
      let largest = -1;
      for (const v of values) if (v > largest) largest = v;
      const out = codesFor(largest, addedByRow.length);
      for (let rowId = 0; rowId < addedByRow.length; rowId++) {
        const value = values[addedByRow[rowId]];
        out[rowId] = Number.isNaN(value) ? -1 : value;
      }
      return out;
    };
    const numbers = {} as Record<NumericColumn, NumberColumn | Decimals>;
    for (const c of NUMERIC_COLUMNS) {
      const values = this.numbers[c].subarray(0, this.size);
      if (isWholeNumberColumn(c) && fitsWhole(values)) numbers[c] = permutedWhole(values);
      else if (fitsSingle(values)) numbers[c] = permutedSingles(values);
      else {
        const doubles = permutedDoubles(values);
        numbers[c] = (isDecimalColumn(c) && exactDecimals(doubles)) || doubles;
      }
      yield;
    }
    const texts = {} as Record<TextColumn, TextRanks>;
    for (const c of TEXT_COLUMNS) {
      texts[c] = TextRanks.ofCodes(this.texts[c].codes, this.texts[c].values, addedByRow);
      yield;
    }
    const shown = {} as Record<ShownTextColumn, TextCodes>;
    const idAt = idReader(texts.id);
    for (const c of SHOWN_TEXT_COLUMNS) {
      shown[c] = permutedCodes(this.shown[c], idAt);
      yield;
    }
    const columns = numbers as unknown as NumberColumns;
    const { areaRowRanges, unplacedRowRanges } = rowRangesOf(columns.area_id, columns.bedroom_count);
    return {
      size: this.size,
      numbers: columns,
      texts,
      shown,
      amenities: new Map([...this.amenityBits].map(([amenity, bits]) => [amenity, renumbered(bits, rowNow)])),
      areaRowRanges,
      unplacedRowRanges,
    };
  }
}

/**
 * Gathers a text column as codes: each distinct value kept once, however many listings share it. The values that came
 * ascending before any other (a listing's id, read in order) are found by binary search and kept in no map: at a
 * million ids a map of them took some 60 MiB, and building it at once when a later value broke the order (a URL
 * path out of the ids' order) held the event loop for a second. Values after the first out of order are kept in a map.
 */
class CodesBuilder {
  /** How many of `values` came ascending before the first out of order (all of them while none has). */
  private ascending = 0;
  /** The code of each value after {@link ascending}. */
  private readonly codeByValue = new Map<string, number>();
  readonly values: string[] = [];
  codes = new Int32Array(1024);
  private size = 0;

  /** The code of `value`, or undefined when it never came: by binary search among the values that came ascending, else from the map. */
  codeOf(value: string): number | undefined {
    let [lo, hi] = [0, this.ascending];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.values[mid] < value) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.ascending && this.values[lo] === value ? lo : this.codeByValue.get(value);
  }

  add(value: string | null): void {
    if (this.size === this.codes.length) {
      const grown = new Int32Array(this.codes.length * 2);
      grown.set(this.codes);
      this.codes = grown;
    }
    let code = -1;
    if (value !== null) {
      const stillAscending = this.ascending === this.values.length;
      if (stillAscending && (this.ascending === 0 || value > this.values[this.ascending - 1])) {
        code = this.values.push(value) - 1;
        this.ascending++;
      } else {
        code = this.codeOf(value) ?? this.values.length;
        if (code === this.values.length) {
          this.codeByValue.set(value, code);
          this.values.push(value);
        }
      }
    }
    this.codes[this.size++] = code;
  }
}

/** Reads the id at a row: made outside the build, whose scope (every column as added) the path list would keep alive. */
const idReader =
  ({ values, ranks }: TextRanks) =>
  (rowId: number): string =>
    values.at(ranks[rowId]);

/** A bit set by row as added -> the same listings' bits by their row in the columns (`rowNow[added]`). */
function renumbered(bits: Uint32Array, rowNow: Int32Array): Uint32Array {
  const out = new Uint32Array(bits.length);
  for (let word = 0; word < bits.length; word++) {
    for (let w = bits[word]; w !== 0; w &= w - 1) {
      const rowId = rowNow[(word << 5) + 31 - Math.clz32(w & -w)];
      out[rowId >>> 5] |= 1 << (rowId & 31);
    }
  }
  return out;
}

/** Whether each of `values` is unknown (NaN) or a whole number from 0 to 32,767: a column then kept as codes. */
function fitsWhole(values: Float64Array): boolean {
  for (const v of values) if (!Number.isNaN(v) && !(Number.isInteger(v) && v >= 0 && v <= 32767)) return false;
  return true;
}
