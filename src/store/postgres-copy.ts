import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * One value in COPY's text format: `\N` for null, and in text a backslash, tab, newline or carriage
 * return escaped (PostgreSQL's documented rules for `COPY ... FROM STDIN`).
 */
function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') return String(value);
  const text = String(value);
  return /[\\\t\n\r]/.test(text)
    ? text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : text;
}

/**
 * Streams `rows` (each the values of `columns`, in order) into `table` with `COPY ... FROM STDIN` on
 * `client`, inside whatever transaction the client is in: PostgreSQL parses a line of text per row
 * instead of binding sixty parameters of a multi-row INSERT. `rows` is turned into text about 64 KiB at a
 * time while PostgreSQL stores the chunks before. Returns how many rows were copied.
 * @throws Error from PostgreSQL (a value of the wrong type, a broken constraint): nothing is copied then.
 */
export async function copyRows(
  client: pg.PoolClient,
  table: string,
  columns: readonly string[],
  rows: Iterable<readonly unknown[]>,
): Promise<number> {
  const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
  const sink: Writable = client.query(copyFrom(`copy ${quote(table)} (${columns.map(quote).join(', ')}) from stdin`));
  let written = 0;
  function* lines(): Generator<string> {
    let chunk = '';
    for (const row of rows) {
      let line = '';
      for (let i = 0; i < row.length; i++) line += (i ? '\t' : '') + copyValue(row[i]);
      chunk += `${line}\n`;
      written++;
      // About 64 KiB a write: few calls into the socket, little held in memory.
      if (chunk.length > 65536) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  await pipeline(Readable.from(lines()), sink);
  return written;
}
