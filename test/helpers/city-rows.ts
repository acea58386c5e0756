import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { SHARED_DATA } from './paths.js';

/**
 * The city's source files read here in the tests, independently of the local SODA emulator's readers, with
 * the rules of docs/open-data.md applied again: what the mirror's recorded sales should be.
 */

/** A recorded sale as the tests see it: borough code 1-5, price in dollars (null when none), date YYYY-MM-DD. */
export interface SourceSale {
  borough: number;
  block: number | null;
  lot: number | null;
  price: number | null;
  gross: number | null;
  date: string;
}

const priceOf = (text: unknown) => {
  const t = String(text ?? '').trim();
  return t === '' || t === '-' ? null : Number(t);
};
const positiveOf = (text: unknown) => {
  const n = Number(String(text ?? '').trim());
  return Number.isFinite(n) && n > 0 ? n : null;
};

/** The Kaggle file of all boroughs, 2016-09 to 2017-08. */
export function kaggleSales(): SourceSale[] {
  const text = gunzipSync(readFileSync(join(SHARED_DATA, 'rolling-sales/nyc-rolling-sales.csv.gz'))).toString('utf8');
  return (parse(text, { columns: true }) as Record<string, string>[]).map((r) => ({
    borough: Number(r.BOROUGH),
    block: positiveOf(r.BLOCK),
    lot: positiveOf(r.LOT),
    price: priceOf(r['SALE PRICE']),
    gross: positiveOf(r['GROSS SQUARE FEET']),
    date: r['SALE DATE'].slice(0, 10),
  }));
}

/** The cleaned Manhattan file, less March 2023 (the workbook holds it). */
export function manhattan2022Sales(): SourceSale[] {
  return (
    parse(readFileSync(join(SHARED_DATA, 'rolling-sales/manhattan-2022-2023.csv'), 'utf8'), { columns: true }) as Record<string, string>[]
  )
    .filter((r) => r.sale_date < '2023-03-01')
    .map((r) => ({
      borough: 1,
      block: null,
      lot: null,
      price: priceOf(r.sale_price),
      gross: positiveOf(r.gross_square_feet),
      date: r.sale_date.slice(0, 10),
    }));
}

/** DOF's five workbooks, 2023-03 to 2024-02: header on row 5, dates as Excel days (exceljs reads them as dates). */
export async function workbookSales(): Promise<SourceSale[]> {
  const out: SourceSale[] = [];
  for (const name of ['manhattan', 'bronx', 'brooklyn', 'queens', 'statenisland']) {
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(join(SHARED_DATA, `rolling-sales/2023-2024/rollingsales_${name}.xlsx`));
    const sheet = book.worksheets[0];
    const header = (sheet.getRow(5).values as unknown[]).map((v) => String(v ?? '').trim());
    const at = (name: string) => header.indexOf(name);
    sheet.eachRow((row, n) => {
      if (n <= 5) return;
      const v = row.values as unknown[];
      const date = v[at('SALE DATE')];
      if (!v[at('BOROUGH')]) return;
      out.push({
        borough: Number(v[at('BOROUGH')]),
        block: positiveOf(v[at('BLOCK')]),
        lot: positiveOf(v[at('LOT')]),
        price: priceOf(v[at('SALE PRICE')]),
        gross: positiveOf(v[at('GROSS SQUARE FEET')]),
        date: date instanceof Date ? date.toISOString().slice(0, 10) : String(date).slice(0, 10),
      });
    });
  }
  return out;
}

/** Type 7 median (the mean of the two middle values of an even count), rounded to cents; null for none. */
export function median(values: number[]): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) / 2;
  const lo = Math.floor(pos);
  return Math.round((s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo)) * 100) / 100;
}
