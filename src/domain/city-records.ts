import proj4 from 'proj4';

/**
 * One row as NYC Open Data's SODA 2.x resource endpoint answers it (docs/open-data.md): lower-case
 * snake_case column names, every value a string, a null column left out. System fields `:id` and
 * `:updated_at` (a fixed timestamp, UTC ISO 8601 with milliseconds) are there when `$select` asks for them.
 */
export type SodaRow = Record<string, string>;

/**
 * API borough ids (100 Manhattan, 200 Brooklyn, 300 Queens, 400 Bronx, 500 Staten Island) by the city's borough
 * code (1 Manhattan, 2 Bronx, 3 Brooklyn, 4 Queens, 5 Staten Island) and by PLUTO's two letters.
 */
const BOROUGH_BY_CODE: Record<string, number> = {
  '1': 100,
  '2': 400,
  '3': 200,
  '4': 300,
  '5': 500,
  MN: 100,
  BX: 400,
  BK: 200,
  QN: 300,
  SI: 500,
};

/** A sale under this many dollars is a transfer without consideration (a deed between relatives, a correction): kept, flagged, out of every figure. */
export const NO_CONSIDERATION_BELOW = 10_000;

/** One recorded sale as the mirror stores it: dollars, square feet, dates `YYYY-MM-DD` (the sale's day in New York). */
export interface RecordedSaleRow {
  id: string;
  borough_id: number;
  /** Borough-block-lot, 10 digits; null when the publication gives no block and lot. */
  bbl: string | null;
  block: number | null;
  lot: number | null;
  neighborhood: string | null;
  building_class_category: string | null;
  /** Building class at the time of sale (DOF code such as `R4`). */
  building_class: string | null;
  tax_class: string | null;
  address: string | null;
  apartment_number: string | null;
  zip_code: string | null;
  residential_units: number | null;
  commercial_units: number | null;
  total_units: number | null;
  land_square_feet: number | null;
  gross_square_feet: number | null;
  year_built: number | null;
  /** Dollars; null where the publication gives none (DOF's " -  "), which is a transfer without consideration too. */
  sale_price: number | null;
  sale_date: string;
  /** Sale price over gross square feet, dollars; null for a transfer without consideration or an unknown size. */
  price_per_sqft: number | null;
  /** 1 when the sale price is under {@link NO_CONSIDERATION_BELOW} or not given. */
  no_consideration: number;
  latitude: number | null;
  longitude: number | null;
  /** Where the position comes from: `tax-lot` (PLUTO), `building` (a mirrored building at the same address), or null. */
  position_source: string | null;
  area_id: number | null;
  /** The districts holding the position (domain/city-districts.ts); null in none or without a position. */
  community_district: number | null;
  police_precinct: number | null;
  school_district: number | null;
  building_id: string | null;
  /** SODA's `:updated_at` of the row (UTC ISO 8601): the watermark of incremental syncs. */
  updated_at: string;
}

/** One tax lot of PLUTO as the mirror stores it; the position is the lot's, converted to WGS84. */
export interface TaxLotRow {
  bbl: string;
  borough_id: number;
  block: number;
  lot: number;
  address: string | null;
  /** {@link addressKey} of the address, for matching buildings and sales by address. */
  address_key: string | null;
  zip_code: string | null;
  community_district: number | null;
  /** PLUTO's council district (PLUTO 16v2: the 2013 lines). */
  council_district: number | null;
  police_precinct: number | null;
  building_class: string | null;
  land_use: string | null;
  floor_count: number | null;
  residential_units: number | null;
  total_units: number | null;
  year_built: number | null;
  historic_district: string | null;
  landmark: string | null;
  latitude: number | null;
  longitude: number | null;
  updated_at: string;
}

/** A positive whole number from SODA's text, else null (DOF and PLUTO write 0 for unknown sizes, years and ZIPs). */
function positive(text: string | undefined): number | null {
  const n = Number(text);
  return text !== undefined && Number.isFinite(n) && n > 0 ? Math.round(n) : null;
}

function textOrNull(text: string | undefined): string | null {
  return text === undefined || text === '' ? null : text;
}

/** The 10-digit BBL of a borough code (1-5), block and lot; null when any is missing. */
export function bblOf(boroughCode: string | undefined, block: string | undefined, lot: string | undefined): string | null {
  const [b, k, l] = [Number(boroughCode), Number(block), Number(lot)];
  if (!Number.isInteger(b) || b < 1 || b > 5 || !(k > 0) || !(l > 0)) return null;
  return `${b}${String(k).padStart(5, '0')}${String(l).padStart(4, '0')}`;
}

const WORDS: Record<string, string> = {
  STREET: 'ST',
  AVENUE: 'AVE',
  AV: 'AVE',
  PLACE: 'PL',
  BOULEVARD: 'BLVD',
  ROAD: 'RD',
  DRIVE: 'DR',
  PARKWAY: 'PKWY',
  LANE: 'LN',
  TERRACE: 'TER',
  COURT: 'CT',
  SQUARE: 'SQ',
  EAST: 'E',
  WEST: 'W',
  NORTH: 'N',
  SOUTH: 'S',
};

/**
 * An address reduced for matching across sources: upper case, the unit after a comma dropped,
 * punctuation removed, street words abbreviated (`STREET` -> `ST`, `EAST` -> `E`) and ordinals bare
 * (`4TH` -> `4`). `347 East 4th Street, 2B` and `347 E 4 ST` have the same key. Null when empty.
 */
export function addressKey(address: string | null | undefined): string | null {
  if (!address) return null;
  const street = address.split(',')[0].toUpperCase().replace(/[.#']/g, '').replace(/\s+/g, ' ').trim();
  if (!street) return null;
  return street
    .split(' ')
    .map((w) => WORDS[w] ?? w.replace(/^(\d+)(ST|ND|RD|TH)$/, '$1'))
    .join(' ');
}

/** Borough names an address may carry after its street (`New York` is Manhattan's postal city). */
const BOROUGH_NAMES: Readonly<Record<string, number>> = {
  MANHATTAN: 100,
  'NEW YORK': 100,
  BROOKLYN: 200,
  QUEENS: 300,
  BRONX: 400,
  'THE BRONX': 400,
  'STATEN ISLAND': 500,
};

/** A street address as a caller writes it, reduced for finding its tax lot: the street's {@link addressKey}, and a ZIP code or borough when given. */
export interface AddressQuery {
  key: string;
  zipCode: string | null;
  boroughId: number | null;
}

/**
 * Reads `56 West 45th Street, Manhattan` or `56 W 45 St, New York, NY 10036`: the part before the first comma is the
 * street address (it must start with a house number: `37-12`, `56`); after it, a five-digit ZIP code and a borough's
 * name are taken, anything else (a state, a Queens neighbourhood) passed over. Null when there is no house number.
 */
export function parseAddress(text: string): AddressQuery | null {
  const [street, ...rest] = text.split(',');
  const key = addressKey(street);
  if (!key || !/^[0-9]+(-[0-9]+)?[A-Z]? [A-Z0-9]/.test(key)) return null;
  let zipCode: string | null = null;
  let boroughId: number | null = null;
  for (const part of rest) {
    const upper = part.toUpperCase().replace(/\s+/g, ' ');
    zipCode = /\b([0-9]{5})(-[0-9]{4})?\b/.exec(upper)?.[1] ?? zipCode;
    const name = upper
      .replace(/\b[0-9]{5}(-[0-9]{4})?\b/g, '')
      .replace(/\bNY\b/g, '')
      .trim();
    boroughId = BOROUGH_NAMES[name] ?? boroughId;
  }
  return { key, zipCode, boroughId };
}

/** A recorded sale from its SODA row (dataset usep-8jbt). Null when the row has no borough or sale date. */
export function recordedSaleFromSoda(row: SodaRow): RecordedSaleRow | null {
  const borough = BOROUGH_BY_CODE[row.borough ?? ''];
  const given = row.sale_price === undefined ? NaN : Number(row.sale_price);
  const price = Number.isFinite(given) && given >= 0 ? Math.round(given) : null;
  const date = row.sale_date?.slice(0, 10);
  if (!borough || !date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return null;
  const gross = positive(row.gross_square_feet);
  const noConsideration = price === null || price < NO_CONSIDERATION_BELOW ? 1 : 0;
  const category = textOrNull(row.building_class_category);
  return {
    id: row[':id'],
    borough_id: borough,
    bbl: bblOf(row.borough, row.block, row.lot),
    block: positive(row.block),
    lot: positive(row.lot),
    neighborhood: textOrNull(row.neighborhood),
    building_class_category: category,
    building_class: textOrNull(row.building_class_at_time_of_sale) ?? textOrNull(row.building_class_at_present),
    tax_class: textOrNull(row.tax_class_at_time_of_sale),
    address: textOrNull(row.address),
    apartment_number: textOrNull(row.apartment_number),
    zip_code: positive(row.zip_code) === null ? null : row.zip_code,
    residential_units: positive(row.residential_units),
    commercial_units: positive(row.commercial_units),
    total_units: positive(row.total_units),
    land_square_feet: positive(row.land_square_feet),
    gross_square_feet: gross,
    year_built: positive(row.year_built),
    sale_price: price,
    sale_date: date,
    price_per_sqft: price !== null && !noConsideration && gross ? Math.round((price / gross) * 100) / 100 : null,
    no_consideration: noConsideration,
    latitude: null,
    longitude: null,
    position_source: null,
    area_id: null,
    community_district: null,
    police_precinct: null,
    school_district: null,
    building_id: null,
    updated_at: row[':updated_at'],
  };
}

// NAD83 / New York Long Island (US feet), EPSG:2263: the projection of PLUTO's XCoord and YCoord.
const LONG_ISLAND_FEET =
  '+proj=lcc +lat_1=41.03333333333333 +lat_2=40.66666666666666 +lat_0=40.16666666666666 +lon_0=-74 +x_0=300000.0000000001 +y_0=0 +ellps=GRS80 +datum=NAD83 +to_meter=0.3048006096012192 +no_defs';
const toWgs84 = proj4(LONG_ISLAND_FEET, 'WGS84');

/** Longitude and latitude (WGS84, 6 decimals) of a point in New York State Plane Long Island feet. */
export function statePlaneToWgs84(x: number, y: number): { latitude: number; longitude: number } {
  const [longitude, latitude] = toWgs84.forward([x, y]);
  return { latitude: Math.round(latitude * 1e6) / 1e6, longitude: Math.round(longitude * 1e6) / 1e6 };
}

/** A tax lot from its SODA row (dataset 64uk-42ks). Null without a BBL or a borough. */
export function taxLotFromSoda(row: SodaRow): TaxLotRow | null {
  const bblNumber = Number(row.bbl);
  const borough = BOROUGH_BY_CODE[row.borough ?? ''] ?? BOROUGH_BY_CODE[String(row.bbl ?? '')[0]];
  if (!Number.isFinite(bblNumber) || bblNumber < 1e9 || !borough) return null;
  const [x, y] = [positive(row.xcoord), positive(row.ycoord)];
  const position = x && y ? statePlaneToWgs84(x, y) : null;
  const floors = Number(row.numfloors);
  return {
    bbl: String(Math.round(bblNumber)),
    borough_id: borough,
    block: Number(row.block),
    lot: Number(row.lot),
    address: textOrNull(row.address),
    address_key: addressKey(row.address),
    zip_code: positive(row.zipcode) === null ? null : row.zipcode,
    community_district: positive(row.cd),
    council_district: positive(row.council),
    police_precinct: positive(row.policeprct),
    building_class: textOrNull(row.bldgclass),
    land_use: textOrNull(row.landuse),
    // PLUTO writes 0 floors for a lot without a building, and halves for partial stories: floors are counted whole, rounded up.
    floor_count: Number.isFinite(floors) && floors > 0 ? Math.ceil(floors) : null,
    residential_units: positive(row.unitsres),
    total_units: positive(row.unitstotal),
    year_built: positive(row.yearbuilt),
    historic_district: textOrNull(row.histdist),
    landmark: textOrNull(row.landmark),
    latitude: position?.latitude ?? null,
    longitude: position?.longitude ?? null,
    updated_at: row[':updated_at'],
  };
}
