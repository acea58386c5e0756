import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * A search by price per square foot with a size filter (`minSqft`, `maxSqft`): the pair whose columns are
 * tied (a price per square foot is known exactly when the size is), which the planners cannot know.
 *
 * - The index such a search walks (`listings_ppsf`, and `listings_ppsf_desc` on PostgreSQL) also holds
 *   the size, so the filter is tested on the index entry and the table row is read only for the entries
 *   that match.
 * - SQLite only: the size index also holds price per square foot and id, the order's keys. When the
 *   planner takes the size range and sorts it, SQLite keeps the page's rows in a sorter of LIMIT entries
 *   and compares each entry's keys before seeking its table row (a deferred seek), so a row that cannot
 *   enter the page is never read. PostgreSQL reads every row of such a range either way (top-N heapsort)
 *   and here walks `listings_ppsf_desc` testing the size on it, so its size index stays as it was.
 *
 * Where few sales have a size, SQLite planned sales of `minSqft=500` by price per square foot as the
 * size range and a sort, reading each row; with this migration it reads only the rows that enter the
 * page, or walks this index when the search adds `price_per_sqft is not null` (see `pageQuery`), even
 * for a size no listing has. Figures in commit 1ee4d47. The key columns in front are unchanged: each
 * index serves what it served before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_ppsf').execute();
  await db.schema.createIndex('listings_ppsf').on('listings').columns(['kind', 'status', 'price_per_sqft', 'id', 'sqft']).execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The descending order with unknown values last (migration 009).
    await sql`drop index listings_ppsf_desc`.execute(db);
    await sql`create index listings_ppsf_desc on listings (kind, status, price_per_sqft desc nulls last, id desc, sqft)`.execute(db);
  } else {
    await db.schema.dropIndex('listings_sqft').execute();
    await db.schema.createIndex('listings_sqft').on('listings').columns(['kind', 'status', 'sqft', 'price_per_sqft', 'id']).execute();
    // New indexes have no statistics until analyzed (migration 014 says why).
    await sql`analyze listings`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_ppsf').execute();
  await db.schema.createIndex('listings_ppsf').on('listings').columns(['kind', 'status', 'price_per_sqft', 'id']).execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index listings_ppsf_desc`.execute(db);
    await sql`create index listings_ppsf_desc on listings (kind, status, price_per_sqft desc nulls last, id desc)`.execute(db);
  } else {
    await db.schema.dropIndex('listings_sqft').execute();
    await db.schema.createIndex('listings_sqft').on('listings').columns(['kind', 'status', 'sqft']).execute();
  }
}
