import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ExcelJS from 'exceljs';
import type { SodaRow } from '../domain/city-records.js';
import { readCsv } from '../lib/csv.js';
import { CITY_FILES } from '../reference/shared-files.js';

/** The rolling sales columns the emulator serves, as usep-8jbt names them; a file's header maps onto them. */
export const SALE_COLUMNS = [
  'borough',
  'neighborhood',
  'building_class_category',
  'tax_class_at_present',
  'block',
  'lot',
  'building_class_at_present',
  'address',
  'apartment_number',
  'zip_code',
  'residential_units',
  'commercial_units',
  'total_units',
  'land_square_feet',
  'gross_square_feet',
  'year_built',
  'tax_class_at_time_of_sale',
  'building_class_at_time_of_sale',
  'sale_price',
  'sale_date',
] as const;

/** PLUTO columns the emulator serves (of 84), lower case as dataset 64uk-42ks names them. */
export const PLUTO_COLUMNS = [
  'bbl',
  'borough',
  'block',
  'lot',
  'address',
  'zipcode',
  'cd',
  'council',
  'policeprct',
  'bldgclass',
  'landuse',
  'numfloors',
  'unitsres',
  'unitstotal',
  'yearbuilt',
  'histdist',
  'landmark',
  'xcoord',
  'ycoord',
] as const;

const WORKBOOKS = ['manhattan', 'bronx', 'brooklyn', 'queens', 'statenisland'] as const;

/** A value as SODA would send it: trimmed, runs of spaces kept single; empty and DOF's " -  " mean null. */
function sodaValue(raw: unknown): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  const text = String(raw).trim().replace(/\s+/g, ' ');
  return text === '' || text === '-' ? undefined : text;
}

/** Numbers the cleaned Manhattan file writes as floats (`1.0`) are integers in DOF's publication. */
function integerText(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && Number.isInteger(n) ? String(n) : raw;
}

function rowId(file: string, index: number): string {
  const h = createHash('sha1').update(`${file}#${index}`).digest('hex');
  return `row-${h.slice(0, 4)}-${h.slice(4, 8)}-${h.slice(8, 12)}`;
}

function sodaRow(values: Partial<Record<string, string | undefined>>, id: string, updatedAt: string): SodaRow {
  const row: SodaRow = { ':id': id, ':updated_at': updatedAt };
  for (const [k, v] of Object.entries(values)) if (v !== undefined) row[k] = v;
  return row;
}

/** `2016-12-14 00:00:00`, `2022-09-29` or a Date into SODA's floating timestamp `2016-12-14T00:00:00.000`. */
function floatingTimestamp(raw: unknown): string | undefined {
  if (raw instanceof Date) return `${raw.toISOString().slice(0, 10)}T00:00:00.000`;
  const text = sodaValue(raw);
  return text && /^\d{4}-\d{2}-\d{2}/.test(text) ? `${text.slice(0, 10)}T00:00:00.000` : undefined;
}

/**
 * The rolling sales of the three publications in the shared folder as SODA rows, one dataset:
 * - the Kaggle file of all boroughs (sales 2016-09 to 2017-08), `:updated_at` 2017-09-22 (its entry date);
 * - the cleaned Manhattan file (2022-04 to 2023-03) less its March 2023, which the workbook also holds;
 *   it has no borough, block or lot (borough is `1`, Manhattan; no BBL), and its derived `unit_price` and
 *   `sqft_price` are not served; `:updated_at` 2023-04-01, the day after its last sale;
 * - DOF's five workbooks (2023-03 to 2024-02), `:updated_at` 2024-03-12 ("as of 03/12/2024").
 * `:id` is a digest of file and row number, stable across builds. Workbooks take seconds to read, so the
 * rows are cached under `cacheDir` by the source files' sizes and times.
 * @throws Error when a file is missing or malformed.
 */
export async function readRollingSales(sharedDataDir: string, cacheDir: string): Promise<SodaRow[]> {
  const sources = [
    CITY_FILES.rollingSales2016,
    CITY_FILES.manhattanSales2022,
    ...WORKBOOKS.map((b) => `${CITY_FILES.rollingSales2023}/rollingsales_${b}.xlsx`),
  ];
  const stamp = sources
    .map((f) => {
      const s = statSync(join(sharedDataDir, f));
      return `${f}:${s.size}:${s.mtimeMs}`;
    })
    .join('|');
  const cache = join(cacheDir, `rolling-sales-${createHash('sha1').update(stamp).digest('hex').slice(0, 12)}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as SodaRow[];
  const rows: SodaRow[] = [];
  const kaggle = readCsv(join(sharedDataDir, CITY_FILES.rollingSales2016));
  kaggle.forEach((r, i) => {
    rows.push(
      sodaRow(
        Object.fromEntries(
          SALE_COLUMNS.map((c) => [
            c,
            c === 'sale_date' ? floatingTimestamp(r['SALE DATE']) : sodaValue(r[c.toUpperCase().replace(/_/g, ' ')]),
          ]),
        ),
        rowId(CITY_FILES.rollingSales2016, i),
        '2017-09-22T00:00:00.000Z',
      ),
    );
  });
  const manhattan = readCsv(join(sharedDataDir, CITY_FILES.manhattanSales2022));
  manhattan.forEach((r, i) => {
    if (r.sale_date >= '2023-03-01') return;
    const values: Record<string, string | undefined> = { borough: '1' };
    for (const c of SALE_COLUMNS) if (c in r) values[c] = c === 'sale_date' ? floatingTimestamp(r[c]) : integerText(sodaValue(r[c]));
    rows.push(sodaRow(values, rowId(CITY_FILES.manhattanSales2022, i), '2023-04-01T00:00:00.000Z'));
  });
  for (const borough of WORKBOOKS) {
    const file = `${CITY_FILES.rollingSales2023}/rollingsales_${borough}.xlsx`;
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(join(sharedDataDir, file));
    const sheet = book.worksheets[0];
    const header = (sheet.getRow(5).values as unknown[]).map((v) =>
      typeof v === 'string'
        ? v
            .trim()
            .toLowerCase()
            .replace(/[\s-]+/g, '_')
        : '',
    );
    for (let n = 6; n <= sheet.rowCount; n++) {
      const cells = sheet.getRow(n).values as unknown[];
      if (!cells.length) continue;
      const values: Record<string, string | undefined> = {};
      header.forEach((name, i) => {
        if ((SALE_COLUMNS as readonly string[]).includes(name))
          values[name] = name === 'sale_date' ? floatingTimestamp(cells[i]) : sodaValue(cells[i]);
      });
      if (!values.borough) continue;
      rows.push(sodaRow(values, rowId(file, n), '2024-03-12T00:00:00.000Z'));
    }
  }
  mkdirSync(dirname(cache), { recursive: true });
  writeFileSync(cache, JSON.stringify(rows));
  return rows;
}

/**
 * PLUTO 16v2's Manhattan lots as SODA rows of {@link PLUTO_COLUMNS}: numbers as the file writes them
 * (`1000010010.00`), `:id` from the BBL, `:updated_at` 2016-09-01 (16v2's release month).
 * @throws Error when the file is missing or malformed.
 */
export function readPluto(sharedDataDir: string): SodaRow[] {
  const header = [
    'BBL',
    'Borough',
    'Block',
    'Lot',
    'Address',
    'ZipCode',
    'CD',
    'Council',
    'PolicePrct',
    'BldgClass',
    'LandUse',
    'NumFloors',
    'UnitsRes',
    'UnitsTotal',
    'YearBuilt',
    'HistDist',
    'Landmark',
    'XCoord',
    'YCoord',
  ] as const;
  return readCsv(join(sharedDataDir, CITY_FILES.pluto), 'latin1', header).map((r, i) =>
    sodaRow(
      Object.fromEntries(header.map((h, k) => [PLUTO_COLUMNS[k], sodaValue(r[h])])),
      rowId(CITY_FILES.pluto, i),
      '2016-09-01T00:00:00.000Z',
    ),
  );
}
