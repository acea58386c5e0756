import {
  RawNode,
  SelectQueryNode,
  sql,
  type ExpressionBuilder,
  type Kysely,
  type KyselyPlugin,
  type OrderByItemBuilder,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import type { BoundingBox } from '../domain/outline.js';
import { SUMMARY_COLUMNS, type SummaryRow } from '../store/listing-rows.js';
import type { Database } from '../store/schema.js';
import { applyFilters } from './filters.js';
import { boxAround, distanceFrom, inBox } from './geography.js';
import type { ListingSearch, ListingsQuery, SearchAfter, SearchContext } from './listing-search.js';
import { planPage, type OrderBound, type PageStrategy, type SearchPlan } from './plan.js';
import { SORTS, type IndexedSort, type SortColumn } from './sorts.js';

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
  const q = inBox(db.selectFrom('listings').where('kind', '=', kind).where('status', '=', 'ACTIVE').where('id', '!=', exceptId), boxAround(near), dialect)
    .where(distanceFrom(near), '<=', near.radius)
    .select(SUMMARY_COLUMNS)
    .select(['sqft'])
    .select(sql<number>`round(${distanceFrom(near)})`.as('distance'));
  return q.execute();
}

/**
 * The search's filters (the table of filters) on active listings of its kind, written as a page's plan says (a count's
 * own way when none: a yes/no filter's yes through its partial index, each amenity joined).
 */
export function filteredListings(
  db: Kysely<Database>,
  s: ListingSearch,
  ctx: SearchContext,
  plan: Pick<SearchPlan, 'flagsByIndex' | 'amenitiesAsSet'> = { flagsByIndex: true, amenitiesAsSet: false },
): Query {
  return applyFilters(db.selectFrom('listings').where('kind', '=', s.kind).where('status', '=', 'ACTIVE'), s, { ...ctx, flagsByIndex: plan.flagsByIndex, amenitiesAsSet: plan.amenitiesAsSet });
}

/** A plugin that reads `listings` of a query's own FROM through one index (SQLite's `INDEXED BY`), for a page that walks its order. */
class ReadThroughIndex implements KyselyPlugin {
  constructor(private readonly index: string) {}

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (!SelectQueryNode.is(node) || !node.from) return node;
    return { ...node, from: { ...node.from, froms: [RawNode.createWithSql(`"listings" indexed by "${this.index}"`)] } } as SelectQueryNode;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }
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
      const equal = keys.slice(0, i).map((k, j) => (after.keys[j] === null ? eb(k.column, 'is', null) : eb(k.column, '=', after.keys[j] as never)));
      let beyond;
      if (i === keys.length) beyond = eb('id', op, after.id);
      else if (after.keys[i] === null) continue; // nothing sorts after null but nulls, compared on the next key
      else beyond = keys[i].nullable ? eb.or([eb(keys[i].column, op, after.keys[i] as never), eb(keys[i].column, 'is', null)]) : eb(keys[i].column, op, after.keys[i] as never);
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
 * Runs a search: the page of rows asked for and the total number of matches (not counted again when
 * the caller knows it: `knownTotal`). Order: the sort field in
 * the asked direction with unknown values last, then (for RECOMMENDED) the listing date, then id, all in
 * the same direction, so pages never overlap. The total is known before the page is read, and chooses
 * how it is read: the stages are the count, the plan ({@link planPage}, pure) and the read ({@link readPage}).
 */
export async function searchListings(
  db: Kysely<Database>,
  s: ListingSearch,
  ctx: SearchContext,
  knownTotal?: number,
): Promise<{ total: number; rows: (SummaryRow & { distance?: number })[] }> {
  // Count first, and let the total choose. SQLite runs one statement at a time on this thread anyway.
  // PostgreSQL ran the two at once on two connections, which saved the page's few milliseconds but let
  // its planner walk the order for matches it cannot foresee: an amenity no sale has (DOORMAN) walked
  // every sale for one page, where the count, far cheaper, says there are none.
  const total = knownTotal ?? (await countListings(db, s, ctx));
  const plan = planPage(s, total, ctx);
  return { total, rows: await readPage(db, s, plan, ctx) };
}

/** Reads the page `plan` says: its summary rows (with the distance in metres when the search has a point). */
export async function readPage(db: Kysely<Database>, s: ListingSearch, plan: SearchPlan, ctx: SearchContext): Promise<(SummaryRow & { distance?: number })[]> {
  if (plan.read === 'empty') return [];
  const base = filteredListings(db, s, ctx, plan);
  if (plan.idsFirst) return deferredPage(db, base, s, ctx, plan.orderBounds).execute();
  return pageQuery(base, s, ctx, plan.read, plan.orderBounds).execute();
}

/**
 * PostgreSQL's walk, and its page with amenities as sets ({@link SearchPlan.amenitiesAsSet}): the page's ids
 * first, in the order, from a statement that needs no other column, then those rows (sorted again, at most `perPage`). A walk names no index there (SQLite's INDEXED BY);
 * its planner walks the order's index itself. But a plain index scan tests on the table row any filter
 * it cannot make an index condition (an OR, such as `noFee=false`'s "unknown or 0"; a list of areas on a
 * later key column), so it fetched the row of every entry it passed. Asking for the ids alone lets it
 * scan the index only, testing the filters the index holds on its entries: a walk that passes many
 * entries gains much, one whose first entries match costs a little more (figures in commit 7b40130).
 */
function deferredPage(db: Kysely<Database>, pageBase: Query, s: ListingSearch, ctx: SearchContext, bounds: readonly OrderBound[]) {
  const ids = orderedPage(pageBase.select('id'), s, ctx, 'planner', bounds);
  return pageQuery(db.selectFrom('listings').where('id', 'in', ids), { ...s, page: 1, after: undefined }, ctx, 'planner', bounds);
}

/**
 * The rows of a page the search index found, in the order of `ids`: the page's summary columns and sort keys
 * (for its cursor), one read by primary key. A listing gone from the store since is left out.
 */
export async function rowsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<SummaryRow[]> {
  if (!ids.length) return [];
  const rows = await db.selectFrom('listings').select(SUMMARY_COLUMNS).select(['recommended_score', 'price_per_sqft']).where('id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The number of active listings matching a search's filters (one COUNT; its order and page play no part). */
export async function countListings(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext): Promise<number> {
  const { n } = await filteredListings(db, s, ctx).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

/** The page's statement: summary columns, the order (see {@link searchListings}) and its implied bounds, the keyset bound or the offset, the limit. */
function pageQuery(base: Query, s: ListingSearch, ctx: SearchContext, strategy: Exclude<PageStrategy, 'empty'>, bounds: readonly OrderBound[]) {
  let rowsQuery = base.select(SUMMARY_COLUMNS).select(['recommended_score', 'price_per_sqft']);
  if (s.near) rowsQuery = rowsQuery.select(sql<number>`round(${distanceFrom(s.near)})`.as('distance')) as unknown as typeof rowsQuery;
  rowsQuery = orderedPage(rowsQuery, s, ctx, strategy, bounds);
  if (strategy === 'walk' && s.sort !== 'DISTANCE') rowsQuery = rowsQuery.withPlugin(new ReadThroughIndex(SORTS[s.sort].index));
  return rowsQuery;
}

/**
 * A query's rows in the page's order (see {@link searchListings}) within the bounds its filters imply (the plan's
 * `orderBounds`), after the keyset bound or the offset, at most `perPage`.
 */
function orderedPage<Q extends Query>(page: Q, s: ListingSearch, ctx: SearchContext, strategy: Exclude<PageStrategy, 'empty'>, bounds: readonly OrderBound[]): Q {
  const dir = s.sortDir === 'ASC' ? 'asc' : 'desc';
  // Every term runs in the asked direction so that one index serves the whole ORDER BY (no sort step).
  // NOT NULL columns need no NULLS clause; DESC already puts nulls last on both databases.
  const order = (nullable: boolean) => (ob: OrderByItemBuilder) => {
    if (dir === 'asc') return nullable ? ob.asc().nullsLast() : ob.asc();
    return nullable && ctx.dialect === 'postgres' ? ob.desc().nullsLast() : ob.desc();
  };
  // To sort, the order's terms become expressions, which no index can give in order: the database then
  // reads the matches through the filters' index and sorts them. `+column` on SQLite; PostgreSQL has no
  // unary plus for text, so its text keys are written `column || ''` (the same text, in the same order).
  const key = (column: SortColumn | 'id') => {
    if (strategy !== 'sort') return column;
    if (ctx.dialect === 'postgres' && (column === 'listed_at' || column === 'id')) return sql`(${sql.ref(column)} || '')`;
    return sql`+${sql.ref(column)}`;
  };
  let rowsQuery: Query = page;
  if (s.sort === 'DISTANCE') {
    if (!s.near) throw new Error('a DISTANCE sort needs a point (near)');
    rowsQuery = rowsQuery.orderBy(distanceFrom(s.near), dir);
  } else {
    for (const term of SORTS[s.sort].keyset) rowsQuery = rowsQuery.orderBy(key(term.column), order(term.nullable));
    for (const bound of bounds) rowsQuery = rowsQuery.where(bound.column, bound.op, bound.value as never);
  }
  // The limit stays a bound value: written into the statement, SQLite's planner weighed it wrongly against
  // an order its index serves only in part (the default order ascending: a sort of every match, where the
  // index and a sort of ties do).
  rowsQuery = rowsQuery.orderBy(key('id'), order(false)).limit(s.perPage);
  if (s.after && s.sort !== 'DISTANCE') rowsQuery = rowsQuery.where(afterRow(s.sort, dir, s.after));
  else rowsQuery = rowsQuery.offset((s.page - 1) * s.perPage);
  return rowsQuery as Q;
}
