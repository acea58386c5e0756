import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import Papa from 'papaparse';

/**
 * Parses CSV text with a header row into objects keyed by column name, every value trimmed. With
 * `columns`, each object holds only those columns ('' where a row lacks one): PLUTO rows have 84
 * columns, and objects that wide are slow to build and to read.
 * @throws Error naming the first row that is not well-formed CSV.
 */
export function parseCsv<C extends string>(text: string, columns?: readonly C[]): Record<C, string>[] {
  const parsed = Papa.parse<string[]>(text, { skipEmptyLines: true });
  const error = parsed.errors[0];
  if (error) throw new Error(`CSV row ${error.row === undefined ? '?' : error.row + 1}: ${error.message}`);
  const [header = [], ...rows] = parsed.data;
  const names = (columns ?? header.map((h) => h.trim())) as readonly C[];
  const positions = names.map((name) => header.findIndex((h) => h.trim() === name));
  return rows.map((row) => {
    const record = {} as Record<C, string>;
    for (let i = 0; i < names.length; i++) record[names[i]] = positions[i] < 0 ? '' : (row[positions[i]] ?? '').trim();
    return record;
  });
}

/**
 * Reads a CSV file with a header row (see `parseCsv`). `.gz` files are gunzipped; `encoding` is the
 * file's text encoding (PLUTO is Latin-1).
 * @throws Error when the file is missing or is not well-formed CSV.
 */
export function readCsv<C extends string>(path: string, encoding: BufferEncoding = 'utf8', columns?: readonly C[]): Record<C, string>[] {
  let bytes = readFileSync(path);
  if (path.endsWith('.gz')) bytes = gunzipSync(bytes);
  return parseCsv(bytes.toString(encoding), columns);
}

/** Reads and parses a JSON file. */
export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
