import type { SummaryRow } from '../store/listing-rows.js';
import { codesFor, Decimals, exactDecimals, fitsSingle, isFloats, type Codes, type Doubles, type Floats } from '../lib/narrow-arrays.js';
import { runNow, type Steps } from '../lib/stepwise.js';
import { TextList, type Texts } from '../lib/text-list.js';
import { PathList } from '../lib/path-list.js';
import { type SlotRun, slotRuns, slotsByAreaBedroomsPrice } from './slot-order.js';
import { TextRanks } from './text-ranks.js';

/**
 * The numeric columns of the listings table that searches filter, sort on or show, as stored (dollars, square feet,
 * degrees), each with how the index may hold it: `whole` in one or two bytes a listing where its values allow (every
 * one a whole number from 0 to 32,767, or unknown: counts, scores, years, district numbers, yes/no flags), -1 for
 * unknown (`valueAt`); `decimal` as whole units of a decimal scale in four bytes where each value reads back the same
 * ({@link Decimals}: positions to six decimals, a percent to one, dollars to cents); `float` in single precision where
 * exact, else double. No `whole` column orders the slots or a sort, nor enters arithmetic; no `decimal` one orders the
 * slots, and each reader of one reads it through `valueAt` or `Decimals.at`.
 */
const NUMERIC = {
  half_bathroom_count: 'whole',
  price: 'float',
  bedroom_count: 'float',
  full_bathroom_count: 'whole',
  sqft: 'whole',
  transit_score: 'whole',
  price_position: 'decimal',
  recommended_score: 'float',
  price_per_sqft: 'decimal',
  monthly_charges: 'float',
  year_built: 'whole',
  latitude: 'decimal',
  longitude: 'decimal',
  area_id: 'float',
  community_district: 'whole',
  police_precinct: 'whole',
  school_district: 'whole',
  pets_allowed: 'whole',
  has_3d_tour: 'whole',
  no_fee: 'whole',
  furnished: 'whole',
} as const satisfies Record<string, 'whole' | 'decimal' | 'float'>;
export type NumericColumn = keyof typeof NUMERIC;
export const NUMERIC_COLUMNS = Object.keys(NUMERIC) as NumericColumn[];
type WholeNumberColumn = { [K in NumericColumn]: (typeof NUMERIC)[K] extends 'whole' ? K : never }[NumericColumn];
const isWholeNumberColumn = (c: NumericColumn): c is WholeNumberColumn => NUMERIC[c] === 'whole';
/** The columns that may be held as codes (see {@link NUMERIC}). */
export const WHOLE_NUMBER_COLUMNS = NUMERIC_COLUMNS.filter(isWholeNumberColumn);

type DecimalColumn = { [K in NumericColumn]: (typeof NUMERIC)[K] extends 'decimal' ? K : never }[NumericColumn];
const isDecimalColumn = (c: NumericColumn): c is DecimalColumn => NUMERIC[c] === 'decimal';

/** The numeric columns as the index holds them: floats, codes or decimals where {@link NUMERIC} allows. */
export type NumberColumns = {
  readonly [K in NumericColumn]: K extends WholeNumberColumn ? NumberColumn : K extends DecimalColumn ? Doubles : Floats;
};

/** The text columns searches filter or sort on; `open_house_until` is `coalesce(open_house_end, open_house_start)`. */
export const TEXT_COLUMNS = ['id', 'listed_at', 'open_house_until', 'available_at', 'building_type', 'sale_type'] as const;
export type TextColumn = (typeof TEXT_COLUMNS)[number];

/** The text columns a page's rows show and no search compares: each listing's value is a code into its distinct values. */
export const SHOWN_TEXT_COLUMNS = [
  'street',
  'unit',
  'city',
  'state',
  'zip_code',
  'area_name',
  'lead_photo_key',
  'source_group_label',
  'url_path',
  'tier',
] as const;
export type ShownTextColumn = (typeof SHOWN_TEXT_COLUMNS)[number];

/** The columns of the listings table the index reads. */
export const INDEXED_ROW_COLUMNS = [
  ...NUMERIC_COLUMNS,
  ...SHOWN_TEXT_COLUMNS,
  'id',
  'listed_at',
  'available_at',
  'building_type',
  'sale_type',
  'open_house_start',
  'open_house_end',
] as const;

/** An active listing as the index reads it: the columns above, as the store holds them. */
export type IndexedRow = { [K in NumericColumn]: number | null } & {
  [K in Exclude<TextColumn, 'open_house_until'> | ShownTextColumn]: string | null;
} & {
  open_house_start: string | null;
  open_house_end: string | null;
};

/**
 * A numeric column in memory: floats with NaN for null, so that every comparison with it is false, as SQL's with NULL is
 * not true; or codes with -1 for null ({@link WHOLE_NUMBER_COLUMNS}), which every narrowing leaves out (narrowing.ts).
 */
export type NumberColumn = Floats | Codes;

/**
 * The active listings of one kind, column by column: listing `slot` (0 to `size - 1`, by area, bedrooms, then price)
 * has `numbers[column][slot]`, `texts[column].ranks[slot]`, its amenities in `amenities`' bit sets. Built
 * once ({@link ColumnsBuilder}), read only; a change in the store builds a new one (search-index.ts).
 */
export interface ListingColumns {
  readonly size: number;
  readonly numbers: NumberColumns;
  readonly texts: Readonly<Record<TextColumn, TextRanks>>;
  /** The texts only shown: `values.at(codes[slot])`, null where the code is -1. */
  readonly shown: Readonly<Record<ShownTextColumn, TextCodes>>;
  /** Per amenity, a bit set of the slots that have it (bit `slot & 31` of word `slot >>> 5`). */
  readonly amenities: ReadonlyMap<string, Uint32Array>;
  /**
   * Per area id, its listings' slots: a run for each bedroom count (unknown last), cheapest first. Slots are numbered
   * by area, then bedrooms, then price (unknown last each time), so that a range of bedrooms within an area is a few
   * of its runs, and a price range within each a run too, found by binary search ({@link priceRun}).
   */
  readonly areaSlots: ReadonlyMap<number, readonly SlotRun[]>;
  /** The slots of the listings in no area (after every area's), a run for each bedroom count likewise. */
  readonly unplacedSlots: readonly SlotRun[];
}

/**
 * A text column as codes into its distinct values (in the order first met): `values.at(codes[slot])`, -1 for null. The
 * codes take the narrowest array that holds them: a byte a listing for a column of a few values (a city, a tier). A
 * column where every listing has a value of its own (a URL path) has no codes: its values are in slot order,
 * `values.at(slot)`, kept as paths whose last segment is mostly the listing's id (lib/path-list.ts).
 */
export interface TextCodes {
  readonly codes: Codes | null;
  readonly values: Texts;
}

/**
 * The row of a search's page for listing `slot`, as the store's page statement selects it (the summary's columns and
 * the sort keys a cursor is made of): the values the index read, null for unknown. Every listing the index holds is active.
 */
export function summaryRowAt(
  columns: ListingColumns,
  slot: number,
): SummaryRow & { recommended_score: number; price_per_sqft: number | null } {
  const { numbers, texts, shown } = columns;
  return {
    id: idAt(columns, slot),
    street: textAt(shown.street, slot),
    unit: textAt(shown.unit, slot),
    city: textAt(shown.city, slot),
    state: textAt(shown.state, slot),
    zip_code: textAt(shown.zip_code, slot),
    price: numbers.price[slot],
    bedroom_count: numberAt(numbers.bedroom_count, slot),
    full_bathroom_count: numberAt(numbers.full_bathroom_count, slot),
    half_bathroom_count: numberAt(numbers.half_bathroom_count, slot),
    building_type: rankedAt(texts.building_type, slot),
    area_name: textAt(shown.area_name, slot),
    status: 'ACTIVE',
    latitude: numberAt(numbers.latitude, slot),
    longitude: numberAt(numbers.longitude, slot),
    lead_photo_key: textAt(shown.lead_photo_key, slot),
    source_group_label: textAt(shown.source_group_label, slot),
    url_path: textAt(shown.url_path, slot),
    tier: textAt(shown.tier, slot),
    listed_at: rankedAt(texts.listed_at, slot) as string,
    recommended_score: numbers.recommended_score[slot],
    price_per_sqft: numberAt(numbers.price_per_sqft, slot),
  };
}

const numberAt = (values: NumberColumn | Decimals, slot: number): number | null => valueAt(values, slot);
const textAt = ({ codes, values }: TextCodes, slot: number): string | null =>
  codes === null ? values.at(slot) : codes[slot] < 0 ? null : values.at(codes[slot]);
const rankedAt = ({ ranks, values }: TextRanks, slot: number): string | null => (ranks[slot] < 0 ? null : values.at(ranks[slot]));

/** Listing `slot`'s value in `column`, null when unknown (NaN in floats and decimals, negative in codes). */
export function valueAt(column: NumberColumn | Decimals, slot: number): number | null {
  if (column instanceof Decimals) {
    const value = column.at(slot);
    return Number.isNaN(value) ? null : value;
  }
  const value = column[slot];
  return Number.isNaN(value) || (value < 0 && !isFloats(column)) ? null : value;
}

/** The id of the listing at `slot`. */
export const idAt = ({ texts }: ListingColumns, slot: number): string => texts.id.values.at(texts.id.ranks[slot]);

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
      const slot = this.slotAdded(listing_id);
      if (slot === undefined) continue;
      let bits = this.amenityBits.get(amenity);
      if (!bits) {
        bits = new Uint32Array((this.size >>> 5) + 1);
        this.amenityBits.set(amenity, bits);
      }
      bits[slot >>> 5] |= 1 << (slot & 31);
    }
  }

  /** The slot listing `id` was added at; undefined when it was not. */
  private slotAdded(id: string): number | undefined {
    // Each id is new (a listing is added once): its code is the slot it was added at.
    return this.texts.id.codeOf(id);
  }

  /**
   * The columns of every listing added, renumbered by area, then bedrooms, then price (unknown last each time), then
   * the order added: the listings of an area and a bedroom count are then one run of slots, and a price range within it
   * one run.
   */
  finish(): ListingColumns {
    return runNow(this.finishing());
  }

  /** {@link finish} in steps: a pause after each column ({@link Steps}). */
  *finishing(): Steps<ListingColumns> {
    const at = (c: NumericColumn) => this.numbers[c].subarray(0, this.size);
    // `slotAdded[slot]`: the slot the listing had when added.
    const slotAdded = yield* slotsByAreaBedroomsPrice(at('area_id'), at('bedroom_count'), at('price'));
    const slotNow = new Int32Array(this.size);
    for (let slot = 0; slot < this.size; slot++) slotNow[slotAdded[slot]] = slot;
    // Loops rather than TypedArray.from with a function, which took seconds at a million listings.
    // One loop for each kind of array: a loop shared by two kinds reads each element many times slower (narrowing.ts).
    // Each column is written once, straight into the kind it keeps: a copy in double precision first took 8 bytes a
    // listing a column more at the build's peak.
    const permutedDoubles = (values: Float64Array): Float64Array => {
      const out = new Float64Array(slotAdded.length);
      for (let slot = 0; slot < slotAdded.length; slot++) out[slot] = values[slotAdded[slot]];
      return out;
    };
    const permutedSingles = (values: Float64Array): Float32Array => {
      const out = new Float32Array(slotAdded.length);
      for (let slot = 0; slot < slotAdded.length; slot++) out[slot] = values[slotAdded[slot]];
      return out;
    };
    const permutedCodes = ({ codes, values }: CodesBuilder, idAt: (slot: number) => string): TextCodes => {
      if (values.length === slotAdded.length) {
        // Each listing's own value (no null among them: a URL path): kept in slot order, without codes, as paths
        // whose last segment is mostly the listing's id (lib/path-list.ts).
        return {
          codes: null,
          values: PathList.of(
            Array.from(slotAdded, (added) => values[codes[added]]),
            idAt,
          ),
        };
      }
      const out = codesFor(values.length - 1, slotAdded.length);
      for (let slot = 0; slot < slotAdded.length; slot++) out[slot] = codes[slotAdded[slot]];
      return { codes: out, values: TextList.of(values) };
    };
    const permutedWhole = (values: Float64Array): Codes => {
      let largest = -1;
      for (const v of values) if (v > largest) largest = v;
      const out = codesFor(largest, slotAdded.length);
      for (let slot = 0; slot < slotAdded.length; slot++) {
        const value = values[slotAdded[slot]];
        out[slot] = Number.isNaN(value) ? -1 : value;
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
      texts[c] = TextRanks.ofCodes(this.texts[c].codes, this.texts[c].values, slotAdded);
      yield;
    }
    const shown = {} as Record<ShownTextColumn, TextCodes>;
    const idAt = idReader(texts.id);
    for (const c of SHOWN_TEXT_COLUMNS) {
      shown[c] = permutedCodes(this.shown[c], idAt);
      yield;
    }
    const columns = numbers as unknown as NumberColumns;
    const { areaSlots, unplacedSlots } = slotRuns(columns.area_id, columns.bedroom_count);
    return {
      size: this.size,
      numbers: columns,
      texts,
      shown,
      amenities: new Map([...this.amenityBits].map(([amenity, bits]) => [amenity, renumbered(bits, slotNow)])),
      areaSlots,
      unplacedSlots,
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

/** Reads the id at a slot: made outside the build, whose scope (every column as added) the path list would keep alive. */
const idReader =
  ({ values, ranks }: TextRanks) =>
  (slot: number): string =>
    values.at(ranks[slot]);

/** A bit set by slot as added -> the same listings' bits by their slot in the columns (`slotNow[added]`). */
function renumbered(bits: Uint32Array, slotNow: Int32Array): Uint32Array {
  const out = new Uint32Array(bits.length);
  for (let word = 0; word < bits.length; word++) {
    for (let w = bits[word]; w !== 0; w &= w - 1) {
      const slot = slotNow[(word << 5) + 31 - Math.clz32(w & -w)];
      out[slot >>> 5] |= 1 << (slot & 31);
    }
  }
  return out;
}

/** Whether each of `values` is unknown (NaN) or a whole number from 0 to 32,767: a column then kept as codes. */
function fitsWhole(values: Float64Array): boolean {
  for (const v of values) if (!Number.isNaN(v) && !(Number.isInteger(v) && v >= 0 && v <= 32767)) return false;
  return true;
}
