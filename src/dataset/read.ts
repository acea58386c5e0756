import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';

/**
 * Reads a CSV file with a header row into objects keyed by column name. `.gz` files are gunzipped;
 * `encoding` is the file's text encoding (PLUTO is Latin-1).
 * @throws Error when the file is missing or is not well-formed CSV.
 */
export function readCsv(path: string, encoding: BufferEncoding = 'utf8'): Record<string, string>[] {
  let bytes = readFileSync(path);
  if (path.endsWith('.gz')) bytes = gunzipSync(bytes);
  return parse(bytes.toString(encoding), { columns: true, skip_empty_lines: true, trim: true }) as Record<string, string>[];
}

/** Reads and parses a JSON file. */
export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
