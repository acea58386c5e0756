import { PostgresAdapter, sql, type Kysely } from 'kysely';
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
 * area and facts. At a million listings (better-sqlite3, one statement): the bedroom counts of Manhattan's
 * rentals 555 ms -> 40 (the area index's ranges); the median of its studios 141 -> 9 (the price order's
 * walk; at most 30 for any count of a borough); the known sizes of Brooklyn's two-bedroom rentals
 * 161 -> 34. By curl, `/v1/market?kind=rental&areas=200&bedrooms=2` took 0.71 s with migration 018
 * alone, 0.16 s with this. PostgreSQL keeps the column: there the expression spoilt its estimates, and
 * the same answer's statements took 246 ms against 114 (parallel scans of the date indexes).
 */
function bedroomsColumn(db: Kysely<Database>) {
  return db.getExecutor().adapter instanceof PostgresAdapter ? sql<number | null>`bedroom_count` : sql<number | null>`+bedroom_count`;
}

/** The active listings behind market figures, and the daily snapshots of those figures. */
export class MarketRepository {
  /**
   * `readDb` reads the active listings' figures (`Store.readDb`: on SQLite, off the event loop); snapshots
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
   * The queries are separate statements: a write committed between two of them shows in the later ones.
   */
  ranked(kind: ListingKind, areaIds: readonly number[] | undefined, bedrooms: number[] | undefined): RankedListings {
    const db = this.readDb;
    const bedroomCount = bedroomsColumn(db);
    const active = () => {
      let q = db.selectFrom('listings').where('kind', '=', kind).where('status', '=', 'ACTIVE');
      if (areaIds) q = q.where('area_id', 'in', areaIds.length ? areaIds : [-1]);
      if (bedrooms) q = q.where(bedroomCount, 'in', bedrooms.length ? bedrooms : [-1]);
      return q;
    };
    const count = async (q: ReturnType<typeof active>) => Number((await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    // Three counts, not one GROUP BY with count(price_per_sqft) and count(listed_at): SQLite answers each of
    // these from an index alone, but reads every row for the combined one (the city's rentals at a million
    // listings: 51 ms for the three, one after another, against 714 ms).
    return {
      bedroomCounts: async () =>
        (await active().select((eb) => [bedroomCount.as('bedroom_count'), eb.fn.countAll<number>().as('n')]).groupBy(bedroomCount).execute()).map((r) => ({
          bedrooms: r.bedroom_count === null ? null : Number(r.bedroom_count),
          count: Number(r.n),
        })),
      sizedCount: async () => count(active().where('price_per_sqft', 'is not', null)),
      // The null range of the date index is a seek on both databases: Manhattan's sales' undated listings at
      // a million listings in 4 ms on SQLite and 2 on PostgreSQL, where counting their dated ones took 108 and 542.
      undatedCount: async () => count(active().where('listed_at', 'is', null)),
      valuesAt: async (order, rank, group) => {
        const column = COLUMN[order];
        let q = active().where(column, 'is not', null);
        if (group !== undefined) q = q.where(bedroomCount, group === null ? 'is' : '=', group);
        // Listing dates newest first: days on market ascending. Ties need no further order: equal values.
        const rows = await q.select(column).orderBy(column, order === 'listedAt' ? 'desc' : 'asc').limit(2).offset(rank).execute();
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
