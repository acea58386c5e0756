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
import { highestPriceWithin } from '../domain/monthly-cost.js';
import { lowestRecommendedScore } from '../domain/recommended-score.js';
import type { BoundingBox } from '../domain/outline.js';
import { SUMMARY_COLUMNS, type SummaryRow } from '../store/listing-rows.js';
import type { Database } from '../store/schema.js';
import { applyFilters, filtersOf, HELD_BY_ORDER_INDEX, YES_NO_FILTERS, type YesNoFilter } from './filters.js';
import { boxAround, distanceFrom, inBox } from './geography.js';
import type { ListingSearch, ListingsQuery, SearchAfter, SearchContext } from './listing-search.js';
import { SORTS, type IndexedSort, type SortColumn } from './sorts.js';

type Query = ListingsQuery;

/** Whether a search asks for the yes side of a yes/no filter (one that a partial index serves). */
const asksYes = (s: ListingSearch) => YES_NO_FILTERS.some((name) => s[name] === true);

/**
 * The first yes/no filter a search asks the no side of (`false`: unknown or 0), if any. Its count has no
 * index (SQLite visits every active listing of the kind), where its yes side has a partial index.
 */
export function noSideFilter(s: ListingSearch): YesNoFilter | undefined {
  return YES_NO_FILTERS.find((name) => s[name] === false);
}

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

/** The search's filters (the table of filters) on active listings of its kind; a yes/no filter's yes is read `byIndex` unless told otherwise. */
function filtered(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext, flagsByIndex = true): Query {
  return applyFilters(db.selectFrom('listings').where('kind', '=', s.kind).where('status', '=', 'ACTIVE'), s, { ...ctx, flagsByIndex });
}

/**
 * How much cheaper a walk passes an index entry that holds every filter than a sort reads and sorts a
 * match, as measured at a million listings on SQLite (commit 28034ed).
 */
const HELD_ENTRY_SPEEDUP = 20;

/** How a page is read (see {@link pageStrategy}). */
export type PageStrategy = 'empty' | 'walk' | 'sort' | 'planner';

/**
 * How a page is read, from the search's exact total (on PostgreSQL a `walk` names no index: {@link deferredPage}):
 * - `empty`: the page starts past the last match (no match at all, say), so there is nothing to read;
 * - `sort`: few matches: read them through the filters' best index and sort them. A walk of the order's
 *   index passes about (rows before the page + perPage) x activeOfKind / total entries when the matches
 *   are spread through the order, a sort visits `total`: this is taken when it costs no more, an entry
 *   that holds every filter costing a {@link HELD_ENTRY_SPEEDUP}th of a sorted match;
 * - `walk` the order's index to the end of the page when each filter is tested on its entries (area,
 *   bedrooms and price on every order, dates on the date orders, size on price per square foot, no fee on
 *   the default order: {@link HELD_BY_ORDER_INDEX}):
 *   no row is read but the page's, so even matches bunched far down the order cost little;
 * - otherwise the `planner`'s choice, as for a geographic or id filter (the spatial index or the id
 *   list drive those), the distance order, or an unknown `activeOfKind`.
 *
 * Why: SQLite's statistics cannot tell its planner that a filter matches nothing here or that two columns
 * are tied. At a million listings it walked every sale by listing date for a search that matched none,
 * sorted tens of thousands of rentals to show fifty, and walked the price order for a few sales (figures
 * in commit 6c47169). A walk is not forced when a filter needs the row (bathrooms, amenities, a monthly
 * cost...): such a filter may be tied to the order, and a walk that reads the row of every entry it passes
 * can then pass far more rows than the planner's sort reads.
 */
export function pageStrategy(s: ListingSearch, total: number, activeOfKind: number | undefined): PageStrategy {
  const rowsBefore = s.after ? 0 : (s.page - 1) * s.perPage;
  if (!s.after && total <= rowsBefore) return 'empty';
  if (activeOfKind === undefined || s.sort === 'DISTANCE' || s.ids || s.bbox || s.near) return 'planner';
  const filters = filtersOf(s);
  const held = filters.length > 0 && filters.every(([name]) => HELD_BY_ORDER_INDEX[s.sort as IndexedSort].has(name));
  // Entries a walk passes cost what a sorted match does (a row read) unless the index holds every filter.
  const entryCost = held ? 1 / HELD_ENTRY_SPEEDUP : 1;
  if (total * total <= (rowsBefore + s.perPage) * activeOfKind * entryCost) return 'sort';
  return held ? 'walk' : 'planner';
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

/**
 * How a search's page is read, decided before any row is: the way ({@link pageStrategy}), and whether a
 * yes/no filter's yes side may be read through its partial index.
 */
export interface SearchPlan {
  /** The search's exact total, which the plan was weighed by. */
  total: number;
  read: PageStrategy;
  /**
   * A yes/no filter's partial index serves the count, and a sort of few matches; any other page must not be
   * read through it (SQLite took it for every rental with no fee and sorted them all for one page).
   */
  flagsByIndex: boolean;
  /** A walk on PostgreSQL reads the page's ids first, from the order's index alone ({@link deferredPage}). */
  idsFirst: boolean;
}

/** The plan of a search's page, from its exact total and the context (pure: no statement is run). */
export function planPage(s: ListingSearch, total: number, ctx: SearchContext): SearchPlan {
  const read = pageStrategy(s, total, ctx.activeOfKind);
  return { total, read, flagsByIndex: read === 'sort' || !asksYes(s), idsFirst: read === 'walk' && ctx.dialect === 'postgres' };
}

/** Reads the page `plan` says: its summary rows (with the distance in metres when the search has a point). */
export async function readPage(db: Kysely<Database>, s: ListingSearch, plan: SearchPlan, ctx: SearchContext): Promise<(SummaryRow & { distance?: number })[]> {
  if (plan.read === 'empty') return [];
  const base = filtered(db, s, ctx, plan.flagsByIndex);
  if (plan.idsFirst) return deferredPage(db, base, s, ctx).execute();
  return pageQuery(base, s, ctx, plan.read).execute();
}

/**
 * PostgreSQL's walk: the page's ids first, in the order, from a statement that needs no other column,
 * then those rows (sorted again, at most `perPage`). A walk names no index there (SQLite's INDEXED BY);
 * its planner walks the order's index itself. But a plain index scan tests on the table row any filter
 * it cannot make an index condition (an OR, such as `noFee=false`'s "unknown or 0"; a list of areas on a
 * later key column), so it fetched the row of every entry it passed. Asking for the ids alone lets it
 * scan the index only, testing the filters the index holds on its entries: a walk that passes many
 * entries gains much, one whose first entries match costs a little more (figures in commit 7b40130).
 */
function deferredPage(db: Kysely<Database>, pageBase: Query, s: ListingSearch, ctx: SearchContext) {
  const ids = orderedPage(pageBase.select('id'), s, ctx, 'planner');
  return pageQuery(
    db.selectFrom('listings').where('id', 'in', ids),
    { ...s, page: 1, after: undefined },
    ctx,
    'planner',
  );
}

/** The number of active listings matching a search's filters (one COUNT; its order and page play no part). */
export async function countListings(db: Kysely<Database>, s: ListingSearch, ctx: SearchContext): Promise<number> {
  const { n } = await filtered(db, s, ctx).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * Bounds on the order's leading key that a search's filters imply, said outright in its page's statement
 * so that the order's index starts (or stops) at them; each changes no answer. Not on the count: there
 * SQLite took the price bound's range of the price index and read half the sales out of order instead
 * of the table in its own; since migration 020 that count reads the price index alone. At a million
 * listings, one page each:
 * - a size above zero gives a price per square foot (domain `pricePerSqft`): the price-per-square-foot
 *   index is walked from its first known value (size tested on the entry, migration 015), not every sale
 *   of that size read and sorted;
 * - a maximum monthly cost bounds the price ({@link highestPriceWithin}): sales by price, highest first,
 *   walked every dearer sale before the first match;
 * - a minimum transit score puts a floor under the recommended score ({@link lowestRecommendedScore}): the
 *   default order ascending walked every listing scored below it first.
 */
function impliedOrderBounds<Q extends Query>(q: Q, s: ListingSearch, ctx: SearchContext): Q {
  let bounded: Query = q;
  if (s.sort === 'PRICE_PER_SQFT' && s.minSqft !== undefined && s.minSqft > 0) bounded = bounded.where('price_per_sqft', 'is not', null);
  if (s.sort === 'PRICE' && s.maxMonthlyCost !== undefined) {
    const highest = highestPriceWithin(s.maxMonthlyCost, ctx.mortgageFactor);
    if (Number.isFinite(highest)) bounded = bounded.where('price', '<=', highest);
  }
  if (s.sort === 'RECOMMENDED' && s.minTransitScore !== undefined) bounded = bounded.where('recommended_score', '>=', lowestRecommendedScore(s.minTransitScore));
  return bounded as Q;
}

/** The page's statement: summary columns, the order (see {@link searchListings}), the keyset bound or the offset, the limit. */
function pageQuery(base: Query, s: ListingSearch, ctx: SearchContext, strategy: Exclude<PageStrategy, 'empty'>) {
  let rowsQuery = base.select(SUMMARY_COLUMNS).select(['recommended_score', 'price_per_sqft']);
  if (s.near) rowsQuery = rowsQuery.select(sql<number>`round(${distanceFrom(s.near)})`.as('distance')) as unknown as typeof rowsQuery;
  rowsQuery = orderedPage(rowsQuery, s, ctx, strategy);
  if (strategy === 'walk' && s.sort !== 'DISTANCE') rowsQuery = rowsQuery.withPlugin(new ReadThroughIndex(SORTS[s.sort].index));
  return rowsQuery;
}

/** A query's rows in the page's order (see {@link searchListings}), after the keyset bound or the offset, at most `perPage`. */
function orderedPage<Q extends Query>(page: Q, s: ListingSearch, ctx: SearchContext, strategy: Exclude<PageStrategy, 'empty'>): Q {
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
    rowsQuery = impliedOrderBounds(rowsQuery, s, ctx);
  }
  // The limit stays a bound value: written into the statement, SQLite's planner weighed it wrongly against
  // an order its index serves only in part (the default order ascending: a sort of every match, where the
  // index and a sort of ties do).
  rowsQuery = rowsQuery.orderBy(key('id'), order(false)).limit(s.perPage);
  if (s.after && s.sort !== 'DISTANCE') rowsQuery = rowsQuery.where(afterRow(s.sort, dir, s.after));
  else rowsQuery = rowsQuery.offset((s.page - 1) * s.perPage);
  return rowsQuery as Q;
}
