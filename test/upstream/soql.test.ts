import { describe, expect, it } from 'vitest';
import type { SodaRow } from '../../src/domain/city-records.js';
import { MAX_LIMIT, parseSoql, runSoql, SoqlError } from '../../src/upstream/local-soda/soql.js';

const COLUMNS = new Set(['borough', 'sale_price', 'sale_date']);
const ROWS: SodaRow[] = [
  { ':id': 'row-c', ':updated_at': '2024-03-12T00:00:00.000Z', borough: '1', sale_price: '900', sale_date: '2023-05-01T00:00:00.000' },
  { ':id': 'row-a', ':updated_at': '2017-09-22T00:00:00.000Z', borough: '3', sale_price: '12000', sale_date: '2016-10-01T00:00:00.000' },
  { ':id': 'row-b', ':updated_at': '2017-09-22T00:00:00.000Z', borough: '3', sale_date: '2016-11-01T00:00:00.000' },
];
const query = (text: string) => parseSoql(new URLSearchParams(text), COLUMNS);

describe("the local SODA emulator's SoQL", () => {
  it('defaults as SODA does: every dataset column, no system fields, 1,000 rows from the first', () => {
    expect(query('')).toEqual({ select: { columns: '*', system: false }, where: [], order: [], limit: 1000, offset: 0 });
    expect(runSoql(ROWS, query(''))[0]).toEqual({ borough: '1', sale_price: '900', sale_date: '2023-05-01T00:00:00.000' });
  });

  it('selects system fields with `:*, *` or by name, and leaves out a null column', () => {
    expect(Object.keys(runSoql(ROWS, query('$select=:*, *'))[0])).toContain(':updated_at');
    expect(runSoql(ROWS, query('$select=:id,sale_price&$order=:id'))).toEqual([
      { ':id': 'row-a', sale_price: '12000' },
      { ':id': 'row-b' },
      { ':id': 'row-c', sale_price: '900' },
    ]);
  });

  it('filters with AND-ed comparisons (numbers as numbers, text and timestamps as text) and orders stably', () => {
    const ids = (text: string) => runSoql(ROWS, query(`$select=:id&${text}`)).map((r) => r[':id']);
    expect(ids("$where=:updated_at > '2017-09-22T00:00:00.000Z'")).toEqual(['row-c']);
    expect(ids("$where=sale_price >= '1000' and borough = '3'")).toEqual(['row-a']);
    expect(ids('$order=:updated_at, :id')).toEqual(['row-a', 'row-b', 'row-c']);
    expect(ids('$order=sale_price desc')).toEqual(['row-b', 'row-a', 'row-c']);
    expect(ids('$order=sale_price')).toEqual(['row-c', 'row-a', 'row-b']);
    expect(ids('$order=:id&$limit=1&$offset=1')).toEqual(['row-b']);
    expect(ids('$order=:id&$offset=10')).toEqual([]);
  });

  it('refuses what it does not know with a message, as SODA answers a malformed query', () => {
    for (const bad of [
      '$group=borough',
      '$select=nope',
      "$where=nope = '1'",
      '$where=borough like 1',
      '$order=borough sideways',
      `$limit=${MAX_LIMIT + 1}`,
      '$limit=-1',
      '$select=*,borough',
    ]) {
      expect(() => query(bad), bad).toThrow(SoqlError);
    }
  });
});
