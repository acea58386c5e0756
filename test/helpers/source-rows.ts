import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { SHARED_DATA } from './paths.js';

/** Rows of a shared CSV file, read here in the test, independently of the dataset builders. */
export function csvRows(relative: string): Record<string, string>[] {
  return parse(readFileSync(join(SHARED_DATA, relative), 'utf8'), { columns: true, trim: true }) as Record<string, string>[];
}

export const rentalRows = () => csvRows('streeteasy-2016/rentals.csv');

/** Residential sales as docs/data.md defines them: category not 11 or 28, price >= $10,000; with the file's row index. */
export type SaleRow = Record<string, string> & { index: number };
export function saleRows(): SaleRow[] {
  return csvRows('rolling-sales/manhattan-2022-2023.csv')
    .map((r, index) => Object.assign(r, { index }) as unknown as SaleRow)
    .filter((r) => !['11', '28'].includes(r.building_class_category.slice(0, 2)) && Number(r.sale_price) >= 10_000);
}

/** The site's real area list (`streeteasy-areas/areas.json`): numeric id, name, slug, parent. */
export function siteAreas(): { id: string; name: string; numericId: number; parentId: number | null }[] {
  return JSON.parse(readFileSync(join(SHARED_DATA, 'streeteasy-areas', 'areas.json'), 'utf8'));
}

/** The upstream area tree (the site's numbering), as parent links. */
export function upstreamParents(): Map<number, number | null> {
  return new Map(siteAreas().map((r) => [r.numericId, r.parentId]));
}
