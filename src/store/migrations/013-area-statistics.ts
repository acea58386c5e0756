import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: statistics of kind, area and bedrooms together. The planner multiplied their separate
 * selectivities, and the areas of a borough hold rentals and sales in very different shares (the sales
 * were Manhattan's), so at a million listings it expected a fortieth of the Brooklyn rentals of one
 * bedroom or more: it read them all by the area index and sorted them for a page by price instead of
 * walking the price index to the fiftieth match (figures in commit 787154e). With these statistics it
 * walked the price index. SQLite has no such statistics and plans this query well without them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create statistics listings_kind_area_beds (mcv, dependencies) on kind, area_id, bedroom_count from listings`.execute(db);
  await sql`analyze listings`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`drop statistics listings_kind_area_beds`.execute(db);
}
