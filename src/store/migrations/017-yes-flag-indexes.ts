import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** The columns of the yes/no filters (petsAllowed, has3dTour, noFee, furnished). */
const FLAG_COLUMNS = ['pets_allowed', 'has_3d_tour', 'no_fee', 'furnished'];

/**
 * A partial index per yes/no filter, holding only the listings where it is yes (`kind, status` where
 * the flag is 1). A search's total counts its entries instead of testing every active listing of the
 * kind, which at a million listings made these the slowest first answers left (figures in commit
 * bd335f4): the totals are counted again for each filter set every minute (days on market read the clock).
 *
 * A page is read through such an index only when its matches are few (pageStrategy's `sort`): on SQLite
 * the search otherwise writes the flag as `+column`, which the index cannot serve, since its planner
 * took the index for the many rentals with no fee and sorted them all for a page of fifty, where the
 * order's walk stops after the page.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of FLAG_COLUMNS) {
    await sql`create index ${sql.ref(`listings_${column}_yes`)} on listings (kind, status) where ${sql.ref(column)} = 1`.execute(db);
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The flags of each kind together (as migration 013 does for areas and bedrooms): multiplying their
    // separate shares, the planner expected 79,565 sales with no fee at a million listings, where the
    // sample has none, and walked the default order's index through every sale for a page.
    // With these statistics it knows no sale has the flag. Rentals with no fee still walk the order.
    await sql`create statistics listings_kind_flags (mcv) on kind, status, no_fee, pets_allowed, furnished, has_3d_tour from listings`.execute(
      db,
    );
  }
  // Both keep statistics per index or column set, and a new one has none until analyzed (as in 013 and 014).
  await sql`analyze listings`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`drop statistics listings_kind_flags`.execute(db);
  for (const column of FLAG_COLUMNS) await db.schema.dropIndex(`listings_${column}_yes`).execute();
}
