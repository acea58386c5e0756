import { createHash } from 'node:crypto';
import { filtersOf } from './filters.js';
import type { ListingSearch, SearchAfter } from './listing-search.js';
import { SORTS } from './sorts.js';

/** Raised when a cursor is malformed or belongs to another search (filters, sort or direction). */
export class CursorError extends Error {}

/**
 * What a cursor must agree with: the filters and the order, not the page or its size; whatever order
 * the query string gave its parameters in.
 */
function fingerprint(search: ListingSearch): string {
  const canonical = [search.kind, search.sort, search.sortDir, filtersOf(search)];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 12);
}

/**
 * The opaque `cursor` of the page after the one that ended with `last` (its sort key values and id):
 * base64url of `{k, id, f}`, `f` tying it to this search. Null for DISTANCE, which pages by number.
 */
export function encodeCursor(search: ListingSearch, last: Record<string, unknown> & { id: string }): string | null {
  if (search.sort === 'DISTANCE') return null;
  const keys = SORTS[search.sort].keyset.map(({ column }) => (last[column] ?? null) as string | number | null);
  return Buffer.from(JSON.stringify({ k: keys, id: last.id, f: fingerprint(search) })).toString('base64url');
}

/**
 * A `cursor` parameter -> where the page starts (after these sort key values and id).
 * @throws CursorError when it is not one of ours, or belongs to another search.
 */
export function decodeCursor(search: ListingSearch, token: string): SearchAfter {
  let parsed: { k?: unknown; id?: unknown; f?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as typeof parsed;
  } catch {
    throw new CursorError('is not a cursor this service issued');
  }
  if (search.sort === 'DISTANCE') throw new CursorError('does not apply to sort=DISTANCE, which pages by `page`');
  const expected = SORTS[search.sort].keyset.length;
  const keys = parsed?.k;
  if (
    !Array.isArray(keys) ||
    keys.length !== expected ||
    typeof parsed.id !== 'string' ||
    keys.some((v) => v !== null && typeof v !== 'string' && typeof v !== 'number')
  ) {
    throw new CursorError('is not a cursor this service issued');
  }
  if (parsed.f !== fingerprint(search))
    throw new CursorError('belongs to another search: keep the filters, sort and sortDir of the answer that gave it');
  return { keys: keys as (string | number | null)[], id: parsed.id };
}
