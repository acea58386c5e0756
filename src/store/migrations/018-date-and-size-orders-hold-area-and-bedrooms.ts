import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The listing-date and price-per-square-foot order indexes also hold the area and the bedroom count, as
 * migration 014 made the price and default orders' indexes do. Two readers gain:
 *
 * - Market figures of some areas read by rank (the median listing date, the median price per square foot
 *   and how many are known): each walked its order's index and read the table row of every entry it
 *   passed to learn the area; now they read the index alone (figures in commit 2bc163d).
 * - A search of some areas or bedrooms by listing date or by price per square foot now tests them on the
 *   entries it walks (`HELD_BY_ORDER_INDEX`), reading only the page's rows.
 *
 * The key columns in front are unchanged, so each index serves the same orders as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropIndex('listings_listed_at').execute();
  await db.schema
    .createIndex('listings_listed_at')
    .on('listings')
    .columns(['kind', 'status', 'listed_at', 'id', 'area_id', 'bedroom_count'])
    .execute();
  await db.schema.dropIndex('listings_ppsf').execute();
  await db.schema
    .createIndex('listings_ppsf')
    .on('listings')
    .columns(['kind', 'status', 'price_per_sqft', 'id', 'sqft', 'area_id', 'bedroom_count'])
    .execute();
  if (postgres) {
    // The descending orders with unknown values last (migrations 009, 015).
    await sql`drop index listings_listed_at_desc`.execute(db);
    await sql`create index listings_listed_at_desc on listings (kind, status, listed_at desc nulls last, id desc, area_id, bedroom_count)`.execute(
      db,
    );
    await sql`drop index listings_ppsf_desc`.execute(db);
    await sql`create index listings_ppsf_desc on listings (kind, status, price_per_sqft desc nulls last, id desc, sqft, area_id, bedroom_count)`.execute(
      db,
    );
  }
  // New indexes have no statistics until analyzed (migration 014 says why).
  await sql`analyze listings`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.dropIndex('listings_listed_at').execute();
  await db.schema.createIndex('listings_listed_at').on('listings').columns(['kind', 'status', 'listed_at', 'id']).execute();
  await db.schema.dropIndex('listings_ppsf').execute();
  await db.schema.createIndex('listings_ppsf').on('listings').columns(['kind', 'status', 'price_per_sqft', 'id', 'sqft']).execute();
  if (postgres) {
    await sql`drop index listings_listed_at_desc`.execute(db);
    await sql`create index listings_listed_at_desc on listings (kind, status, listed_at desc nulls last, id desc)`.execute(db);
    await sql`drop index listings_ppsf_desc`.execute(db);
    await sql`create index listings_ppsf_desc on listings (kind, status, price_per_sqft desc nulls last, id desc, sqft)`.execute(db);
  }
}
