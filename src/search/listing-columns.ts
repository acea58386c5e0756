import type { SummaryRow } from '../store/listing-rows.js';
import { Decimals, isFloats, type Codes, type Doubles, type Floats } from '../lib/narrow-arrays.js';
import type { Texts } from '../lib/text-list.js';
import type { RowRange } from './row-order.js';
import type { TextRanks } from './text-ranks.js';

/**
 * The numeric columns of the listings table that searches filter, sort on or show, as stored (dollars, square feet,
 * degrees), each with how the index may hold it: `whole` in one or two bytes a listing where its values allow (every
 * one a whole number from 0 to 32,767, or unknown: counts, scores, years, district numbers, yes/no flags), -1 for
 * unknown (`valueAt`); `decimal` as whole units of a decimal scale in four bytes where each value reads back the same
 * ({@link Decimals}: positions to six decimals, a percent to one, dollars to cents); `float` in single precision where
 * exact, else double. No `whole` column orders the rows or a sort, nor enters arithmetic; no `decimal` one orders the
 * rows, and each reader of one reads it through `valueAt` or `Decimals.at`.
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
export type WholeNumberColumn = { [K in NumericColumn]: (typeof NUMERIC)[K] extends 'whole' ? K : never }[NumericColumn];
export const isWholeNumberColumn = (c: NumericColumn): c is WholeNumberColumn => NUMERIC[c] === 'whole';
/** The columns that may be held as codes (see {@link NUMERIC}). */
export const WHOLE_NUMBER_COLUMNS = NUMERIC_COLUMNS.filter(isWholeNumberColumn);

export type DecimalColumn = { [K in NumericColumn]: (typeof NUMERIC)[K] extends 'decimal' ? K : never }[NumericColumn];
export const isDecimalColumn = (c: NumericColumn): c is DecimalColumn => NUMERIC[c] === 'decimal';

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
 * not true; or codes with -1 for null ({@link WHOLE_NUMBER_COLUMNS}), which every candidate filter leaves out (candidate-filters.ts).
 */
export type NumberColumn = Floats | Codes;

/**
 * The active listings of one kind, column by column: listing `rowId` (0 to `size - 1`, by area, bedrooms, then price)
 * has `numbers[column][rowId]`, `texts[column].ranks[rowId]`, its amenities in `amenities`' bit sets. Built
 * once ({@link ColumnsBuilder}), read only; a change in the store builds a new one (search-index.ts).
 */
export interface ListingColumns {
  readonly size: number;
  readonly numbers: NumberColumns;
  readonly texts: Readonly<Record<TextColumn, TextRanks>>;
  /** The texts only shown: `values.at(codes[rowId])`, null where the code is -1. */
  readonly shown: Readonly<Record<ShownTextColumn, TextCodes>>;
  /** Per amenity, a bit set of the rows that have it (bit `rowId & 31` of word `rowId >>> 5`). */
  readonly amenities: ReadonlyMap<string, Uint32Array>;
  /**
   * Per area id, its listings' rows: a range for each bedroom count (unknown last), cheapest first. Rows are numbered
   * by area, then bedrooms, then price (unknown last each time), so that a range of bedrooms within an area is a few
   * of its ranges, and a price range within each a range too, found by binary search ({@link priceRowRange}).
   */
  readonly areaRowRanges: ReadonlyMap<number, readonly RowRange[]>;
  /** The rows of the listings in no area (after every area's), a range for each bedroom count likewise. */
  readonly unplacedRowRanges: readonly RowRange[];
}

/**
 * A text column as codes into its distinct values (in the order first met): `values.at(codes[rowId])`, -1 for null. The
 * codes take the narrowest array that holds them: a byte a listing for a column of a few values (a city, a tier). A
 * column where every listing has a value of its own (a URL path) has no codes: its values are in row order,
 * `values.at(rowId)`, kept as paths whose last segment is mostly the listing's id (lib/path-list.ts).
 */
export interface TextCodes {
  readonly codes: Codes | null;
  readonly values: Texts;
}

/**
 * The row of a search's page for listing `rowId`, as the store's page statement selects it (the summary's columns and
 * the sort keys a cursor is made of): the values the index read, null for unknown. Every listing the index holds is active.
 */
export function summaryRowAt(
  columns: ListingColumns,
  rowId: number,
): SummaryRow & { recommended_score: number; price_per_sqft: number | null } {
  const { numbers, texts, shown } = columns;
  return {
    id: idAt(columns, rowId),
    street: textAt(shown.street, rowId),
    unit: textAt(shown.unit, rowId),
    city: textAt(shown.city, rowId),
    state: textAt(shown.state, rowId),
    zip_code: textAt(shown.zip_code, rowId),
    price: numbers.price[rowId],
    bedroom_count: numberAt(numbers.bedroom_count, rowId),
    full_bathroom_count: numberAt(numbers.full_bathroom_count, rowId),
    half_bathroom_count: numberAt(numbers.half_bathroom_count, rowId),
    building_type: rankedAt(texts.building_type, rowId),
    area_name: textAt(shown.area_name, rowId),
    status: 'ACTIVE',
    latitude: numberAt(numbers.latitude, rowId),
    longitude: numberAt(numbers.longitude, rowId),
    lead_photo_key: textAt(shown.lead_photo_key, rowId),
    source_group_label: textAt(shown.source_group_label, rowId),
    url_path: textAt(shown.url_path, rowId),
    tier: textAt(shown.tier, rowId),
    listed_at: rankedAt(texts.listed_at, rowId) as string,
    recommended_score: numbers.recommended_score[rowId],
    price_per_sqft: numberAt(numbers.price_per_sqft, rowId),
  };
}

const numberAt = (values: NumberColumn | Decimals, rowId: number): number | null => valueAt(values, rowId);
const textAt = ({ codes, values }: TextCodes, rowId: number): string | null =>
  codes === null ? values.at(rowId) : codes[rowId] < 0 ? null : values.at(codes[rowId]);
const rankedAt = ({ ranks, values }: TextRanks, rowId: number): string | null => (ranks[rowId] < 0 ? null : values.at(ranks[rowId]));

/** Listing `rowId`'s value in `column`, null when unknown (NaN in floats and decimals, negative in codes). */
export function valueAt(column: NumberColumn | Decimals, rowId: number): number | null {
  if (column instanceof Decimals) {
    const value = column.at(rowId);
    return Number.isNaN(value) ? null : value;
  }
  const value = column[rowId];
  return Number.isNaN(value) || (value < 0 && !isFloats(column)) ? null : value;
}

/** The id of the listing at `rowId`. */
export const idAt = ({ texts }: ListingColumns, rowId: number): string => texts.id.values.at(texts.id.ranks[rowId]);
