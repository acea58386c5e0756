import { PostgresAdapter, sql, type Kysely } from 'kysely';
import PQueue from 'p-queue';
import type { ListingKind } from '../domain/listing.js';
import type { RankedListings } from '../domain/market.js';
import type { MarketFigures } from '../wire/market.js';
import type { Database } from './schema.js';

/** The column behind each order market figures read by rank. */
const COLUMN = { price: 'price', pricePerSqft: 'price_per_sqft', listedAt: 'listed_at' } as const;

/**
 * The bedroom count as market figures filter and group by it. On SQLite `+bedroom_count`, which no index
 * serves, so that the planner reads the index that holds everything else a figure needs (the area, the
 * order's value; the order indexes hold the bedroom count too, migrations 014 and 018) and never the
 * table: with the bedroom index it read the row of every listing of those bedroom counts to learn its
 * area and facts (commit 2bc163d has the figures). PostgreSQL keeps the column: there the expression
 * spoilt its estimates and made the same answer's statements slower (commit 82f8695).
 */
function bedroomsColumn(db: Kysely<Database>) {
  return db.getExecutor().adapter instanceof PostgresAdapter ? sql<number | null>`bedroom_count` : sql<number | null>`+bedroom_count`;
}

/**
 * The statements one request's market figures run at once, at most. The figures ask for a dozen and more
 * (three counts, five ranks, a median per bedroom count), all at once: on PostgreSQL unbounded they took every
 * connection of the pool (10), so that every other request waited, and on a busy machine the figures' own last
 * statements waited past the pool's connection timeout and the request was answered 503. SQLite runs one at a time
 * anyway.
 */
export const MARKET_STATEMENTS_AT_ONCE = 3;

/** The active listings behind market figures, and the daily snapshots of those figures. */
export class MarketRepository {
  /**
   * `readDb` reads the active listings' figures (`Store.readDb`, never behind a write); snapshots
   * are read and written on `db`.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly readDb: Kysely<Database> = db,
  ) {}

  /**
   * The active listings of `kind` in these areas (ids already expanded to descendants; all when none),
   * optionally of some bedroom counts, as market figures read them: each answer is one query that returns
   * a few rows (counts by group, or the two values at a rank of one order), none returns every listing.
   * The queries are separate statements: a write committed between two of them shows in the later ones. At most
   * {@link MARKET_STATEMENTS_AT_ONCE} of them run at once; the others wait their turn here, not for a connection.
   */
  ranked(kind: ListingKind, areaIds: readonly number[] | undefined, bedrooms: number[] | undefined): RankedListings {
    const db = this.readDb;
    const turns = new PQueue({ concurrency: MARKET_STATEMENTS_AT_ONCE });
    const inTurn = <T>(read: () => Promise<T>): Promise<T> => turns.add(read);
    const bedroomCount = bedroomsColumn(db);
    const active = () => {
      let q = db.selectFrom('listings').where('kind', '=', kind).where('status', '=', 'ACTIVE');
      if (areaIds) q = q.where('area_id', 'in', areaIds.length ? areaIds : [-1]);
      if (bedrooms) q = q.where(bedroomCount, 'in', bedrooms.length ? bedrooms : [-1]);
      return q;
    };
    const count = async (q: ReturnType<typeof active>) =>
      Number((await inTurn(() => q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow())).n);
    // Three counts, not one GROUP BY with count(price_per_sqft) and count(listed_at): SQLite answers each of
    // these from an index alone, but reads every row for the combined one.
    return {
      bedroomCounts: async () =>
        (
          await inTurn(() =>
            active()
              .select((eb) => [bedroomCount.as('bedroom_count'), eb.fn.countAll<number>().as('n')])
              .groupBy(bedroomCount)
              .execute(),
          )
        ).map((r) => ({
          bedrooms: r.bedroom_count === null ? null : Number(r.bedroom_count),
          count: Number(r.n),
        })),
      sizedCount: async () => count(active().where('price_per_sqft', 'is not', null)),
      // The null range of the date index is a seek on both databases, where counting the dated listings (nearly
      // all of them) visits each.
      undatedCount: async () => count(active().where('listed_at', 'is', null)),
      valuesAt: async (order, rank, group) => {
        const column = COLUMN[order];
        let q = active().where(column, 'is not', null);
        if (group !== undefined) q = q.where(bedroomCount, group === null ? 'is' : '=', group);
        // Listing dates newest first: days on market ascending. Ties need no further order: equal values.
        const rows = await inTurn(() =>
          q
            .select(column)
            .orderBy(column, order === 'listedAt' ? 'desc' : 'asc')
            .limit(2)
            .offset(rank)
            .execute(),
        );
        return rows.map((r) => (r as Record<string, number | string>)[column]);
      },
    };
  }

  /** Records (or replaces) the figures of one day: the day's last sync leaves its end-of-day figures. */
  async record(day: string, kind: ListingKind, areaId: number, figures: MarketFigures, at: string): Promise<void> {
    await this.db
      .insertInto('market_snapshots')
      .values({ day, kind, area_id: areaId, figures: JSON.stringify(figures), recorded_at: at })
      .onConflict((oc) => oc.columns(['kind', 'area_id', 'day']).doUpdateSet({ figures: JSON.stringify(figures), recorded_at: at }))
      .execute();
  }

  /** The snapshots of a kind in an area (0: the city) from `from` to `to` (days, inclusive), oldest first. */
  async history(kind: ListingKind, areaId: number, from: string, to: string): Promise<{ day: string; figures: MarketFigures }[]> {
    const rows = await this.db
      .selectFrom('market_snapshots')
      .select(['day', 'figures'])
      .where('kind', '=', kind)
      .where('area_id', '=', areaId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .orderBy('day')
      .execute();
    return rows.map((r) => ({ day: r.day, figures: JSON.parse(r.figures) as MarketFigures }));
  }
}
