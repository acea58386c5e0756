import type { SodaRow } from '../../domain/city-records.js';

/**
 * The part of SoQL the local SODA emulator answers (docs/open-data.md), parsed from a request's query
 * parameters. Anything else is refused with {@link SoqlError}, as SODA refuses a malformed query (400):
 * the emulator may know less than SODA, never more.
 */
export interface SoqlQuery {
  /** Columns to answer, or `*` (dataset columns) with or without the system fields (`:*`). */
  select: { columns: string[] | '*'; system: boolean };
  /** Conditions joined by AND: `<column> <op> '<text>'`; values compare as text, as SODA's text and timestamps do. */
  where: { column: string; op: '=' | '>' | '>=' | '<' | '<='; value: string }[];
  order: { column: string; descending: boolean }[];
  limit: number;
  offset: number;
}

/** A query SODA would refuse with 400 and a message. */
export class SoqlError extends Error {}

/** SODA's default page size; the most a 2.0 endpoint answers at once (larger limits are refused here). */
export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 50_000;

const KNOWN = new Set(['$select', '$where', '$order', '$limit', '$offset']);
const COLUMN = /^:?[a-z_][a-z0-9_]*$/;

/**
 * Parses `$select`, `$where`, `$order`, `$limit` and `$offset` against the dataset's `columns`.
 * @throws SoqlError on any other `$` parameter, an unknown column, or a form outside the subset.
 */
export function parseSoql(params: URLSearchParams, columns: ReadonlySet<string>): SoqlQuery {
  for (const name of params.keys())
    if (name.startsWith('$') && !KNOWN.has(name)) throw new SoqlError(`Unsupported query parameter ${name}`);
  const known = (column: string) => {
    if (!COLUMN.test(column) || (!columns.has(column) && column !== ':id' && column !== ':updated_at'))
      throw new SoqlError(`No such column: ${column}`);
    return column;
  };
  const selectText = (params.get('$select') ?? '*').split(',').map((s) => s.trim());
  let select: SoqlQuery['select'];
  if (selectText.includes('*')) {
    if (selectText.some((s) => s !== '*' && s !== ':*')) throw new SoqlError('Mixing * with named columns is not supported here');
    select = { columns: '*', system: selectText.includes(':*') };
  } else {
    select = { columns: selectText.map(known), system: false };
  }
  const where: SoqlQuery['where'] = [];
  const whereText = params.get('$where');
  if (whereText) {
    for (const part of whereText.split(/\s+and\s+/i)) {
      const m = /^\s*(:?[a-z_][a-z0-9_]*)\s*(>=|<=|=|>|<)\s*'([^']*)'\s*$/i.exec(part);
      if (!m) throw new SoqlError(`Could not parse $where: ${part}`);
      where.push({ column: known(m[1]), op: m[2] as SoqlQuery['where'][number]['op'], value: m[3] });
    }
  }
  const order = (params.get('$order') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((term) => {
      const [column, direction = 'asc', ...rest] = term.split(/\s+/);
      if (rest.length || !/^(asc|desc)$/i.test(direction)) throw new SoqlError(`Could not parse $order: ${term}`);
      return { column: known(column), descending: direction.toLowerCase() === 'desc' };
    });
  const integer = (name: string, fallback: number, max: number) => {
    const text = params.get(name);
    if (text === null) return fallback;
    if (!/^\d+$/.test(text) || Number(text) > max) throw new SoqlError(`${name} must be an integer from 0 to ${max}`);
    return Number(text);
  };
  return {
    select,
    where,
    order,
    limit: integer('$limit', DEFAULT_LIMIT, MAX_LIMIT),
    offset: integer('$offset', 0, Number.MAX_SAFE_INTEGER),
  };
}

function compare(a: string | undefined, b: string | undefined): number {
  // A null sorts as the greatest value (last ascending, first descending), as PostgreSQL sorts them; how SODA
  // sorts nulls is not known, and the service's client orders only by columns that are never null. Numbers
  // in these datasets come as text and compare as numbers when both sides are numbers.
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  const na = Number(a);
  const nb = Number(b);
  if (a !== '' && b !== '' && Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return a < b ? -1 : 1;
}

/** Answers `query` over `rows`: filtered, ordered, one page, with the columns selected. */
export function runSoql(rows: readonly SodaRow[], query: SoqlQuery): SodaRow[] {
  let matched = query.where.length
    ? rows.filter((row) =>
        query.where.every(({ column, op, value }) => {
          const v = row[column];
          if (v === undefined) return false;
          const c = compare(v, value);
          return op === '=' ? c === 0 : op === '>' ? c > 0 : op === '>=' ? c >= 0 : op === '<' ? c < 0 : c <= 0;
        }),
      )
    : [...rows];
  if (query.order.length) {
    matched.sort((a, b) => {
      for (const { column, descending } of query.order) {
        const c = compare(a[column], b[column]);
        if (c) return descending ? -c : c;
      }
      return 0;
    });
  }
  matched = matched.slice(query.offset, query.offset + query.limit);
  return matched.map((row) => {
    const out: SodaRow = {};
    if (query.select.columns === '*') {
      for (const [k, v] of Object.entries(row)) if (query.select.system || !k.startsWith(':')) out[k] = v;
    } else {
      for (const c of query.select.columns) if (row[c] !== undefined) out[c] = row[c];
    }
    return out;
  });
}
