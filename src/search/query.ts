import { sql, type ExpressionBuilder, type Kysely, type OrderByItemBuilder } from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import type { BoundingBox } from '../domain/outline.js';
import { SUMMARY_COLUMNS, type SummaryRow } from '../store/listing-rows.js';
import type { Database } from '../store/schema.js';
import { applyFilters } from './filters.js';
import { boxAround, distanceFrom, inBox } from './geography.js';
import type { ListingSearch, ListingsQuery, SearchAfter, SearchContext } from './listing-search.js';
import { SORTS, type IndexedSort } from './sorts.js';

type Query = ListingsQuery;

/** Active listings of `kind` inside `box`: id and position (for a polygon, tested point by point after). */
export async function listingsInBox(db: Kysely<Database>, kind: ListingKind, box: BoundingBox, dialect: 'sqlite' | 'postgres') {
  const q = inBox(db.selectFrom('listings').where('kind', '=', kind).where('status', '=', 'ACTIVE'), box, dialect);
  return (await q.select(['id', 'latitude', 'longitude']).execute()) as { id: string; latitude: number; longitude: number }[];
}

/**
 * Active listings of `kind` within `near.radius` metres (spatial index, then great-circle), other than
 * `exceptId`: their summary columns, size and distance in metres.
 */
export async function listingsNear(
  db: Kysely<Database>,
  kind: ListingKind,
  near: { latitude: number; longitude: number; radius: number },
  exceptId: string,
  dialect: 'sqlite' | 'postgres',
) {
  const q = inBox(
    db.selectFrom('listings').where('kind', '=', kind).where('status', '=', 'ACTIVE').where('id', '!=', exceptId),
    boxAround(near),
    dialect,
  )
    .where(distanceFrom(near), '<=', near.radius)
    .select(SUMMARY_COLUMNS)
    .select(['sqft'])
    .select(sql<number>`round(${distanceFrom(near)})`.as('distance'));
  return q.execute();
}

/** The search's filters (the table of filters) on active listings of its kind. */
export function filteredListings(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext): Query {
  return applyFilters(db.selectFrom('listings').where('kind', '=', s.kind).where('status', '=', 'ACTIVE'), s, ctx);
}

/**
 * Rows after `after` in the order (sort keys then id, all in direction `dir`, unknown values last): a
 * row-value comparison `(key, id) > (?, ?)` when no key is nullable, otherwise its expansion with the
 * nulls-last rule. Served by the same index as the ORDER BY, so a deep page costs what the first does.
 */
function afterRow(sort: IndexedSort, dir: 'asc' | 'desc', after: SearchAfter) {
  const keys = SORTS[sort].keyset;
  const op = dir === 'asc' ? '>' : '<';
  return (eb: ExpressionBuilder<Database, 'listings'>) => {
    if (keys.every((k) => !k.nullable)) {
      return eb(eb.refTuple(...(keys.map((k) => k.column) as ['price']), 'id'), op, eb.tuple(...(after.keys as [number]), after.id));
    }
    // (k1, ..., kn, id) after (v1, ..., vn, id0), nulls last: for some i, the keys before i equal and k_i after v_i.
    const terms = [];
    for (let i = 0; i <= keys.length; i++) {
      const equal = keys
        .slice(0, i)
        .map((k, j) => (after.keys[j] === null ? eb(k.column, 'is', null) : eb(k.column, '=', after.keys[j] as never)));
      let beyond: ReturnType<typeof eb.and>;
      if (i === keys.length) beyond = eb('id', op, after.id);
      else if (after.keys[i] === null)
        continue; // nothing sorts after null but nulls, compared on the next key
      else
        beyond = keys[i].nullable
          ? eb.or([eb(keys[i].column, op, after.keys[i] as never), eb(keys[i].column, 'is', null)])
          : eb(keys[i].column, op, after.keys[i] as never);
      terms.push(eb.and([...equal, beyond]));
    }
    const expanded = eb.or(terms);
    if (keys[0].nullable) return expanded;
    // A bound on the leading key that every term implies: with it the index scan starts at the previous
    // page's last row. PostgreSQL does not derive it from the OR, and scanned from the top of the order
    // on every page instead, reading every row before the page again.
    return eb.and([eb(keys[0].column, dir === 'asc' ? '>=' : '<=', after.keys[0] as never), expanded]);
  };
}

/**
 * Runs a search in the store: the page of rows asked for and the total number of matches. Order: the sort field
 * in the asked direction with unknown values last, then (for RECOMMENDED) the listing date, then id, all in the
 * same direction, so pages never overlap. The store answers while the search index is not current, with it off
 * (SEARCH_INDEX), and for searches the index leaves to it (a sort by DISTANCE); two plain statements.
 */
export async function searchListings(
  db: Kysely<Database>,
  s: ListingSearch,
  ctx: SearchContext,
): Promise<{ total: number; rows: (SummaryRow & { distance?: number })[] }> {
  const total = await countListings(db, s, ctx);
  const rowsBefore = s.after ? 0 : (s.page - 1) * s.perPage;
  if (!s.after && total <= rowsBefore) return { total, rows: [] };
  return { total, rows: await pageQuery(filteredListings(db, s, ctx), s, ctx).execute() };
}

/** The number of active listings matching a search's filters (one COUNT; its order and page play no part). */
export async function countListings(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext): Promise<number> {
  const { n } = await filteredListings(db, s, ctx)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** The page's statement: summary columns, the order (see {@link searchListings}), the keyset bound or the offset, the limit. */
function pageQuery(base: Query, s: ListingSearch, ctx: SearchContext) {
  let rowsQuery = base.select(SUMMARY_COLUMNS).select(['recommended_score', 'price_per_sqft']);
  if (s.near) rowsQuery = rowsQuery.select(sql<number>`round(${distanceFrom(s.near)})`.as('distance')) as unknown as typeof rowsQuery;
  const dir = s.sortDir === 'ASC' ? 'asc' : 'desc';
  // Every term runs in the asked direction so that one index serves the whole ORDER BY (no sort step).
  // NOT NULL columns need no NULLS clause; DESC already puts nulls last on both databases.
  const order = (nullable: boolean) => (ob: OrderByItemBuilder) => {
    if (dir === 'asc') return nullable ? ob.asc().nullsLast() : ob.asc();
    return nullable && ctx.dialect === 'postgres' ? ob.desc().nullsLast() : ob.desc();
  };
  if (s.sort === 'DISTANCE') {
    if (!s.near) throw new Error('a DISTANCE sort needs a point (near)');
    rowsQuery = rowsQuery.orderBy(distanceFrom(s.near), dir);
  } else {
    for (const term of SORTS[s.sort].keyset) rowsQuery = rowsQuery.orderBy(term.column, order(term.nullable));
  }
  rowsQuery = rowsQuery.orderBy('id', order(false)).limit(s.perPage);
  if (s.after && s.sort !== 'DISTANCE') rowsQuery = rowsQuery.where(afterRow(s.sort, dir, s.after));
  else rowsQuery = rowsQuery.offset((s.page - 1) * s.perPage);
  return rowsQuery;
}
