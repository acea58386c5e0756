import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The default, listing-date and price-per-square-foot order indexes also hold the price, as the price
 * order's own does, so that a walk of any order tests a price bound on the index entry. A search with a
 * price ceiling in a large area (the commonest search there is) matched tens of thousands of rentals at a
 * million listings; no order's index held the price, so the page strategy left it to the planner, which
 * read every match through the price index and sorted them all for one page (figures in the commit). Now
 * such a page walks its order's index and reads only its own rows. The key columns in front are unchanged,
 * so each index serves the same orders as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await rebuild(db, 'price');
}

export async function down(db: Kysely<any>): Promise<void> {
  await rebuild(db, null);
}

/** Builds the three order indexes again, holding `extra` after their columns of migrations 018 and 019. */
async function rebuild(db: Kysely<any>, extra: 'price' | null): Promise<void> {
  const more = extra ? [extra] : [];
  const tail = extra ? `, ${extra}` : '';
  await db.schema.dropIndex('listings_recommended').execute();
  await db.schema
    .createIndex('listings_recommended')
    .on('listings')
    .columns(['kind', 'status', 'recommended_score', 'listed_at', 'id', 'area_id', 'bedroom_count', 'no_fee', ...more])
    .execute();
  await db.schema.dropIndex('listings_listed_at').execute();
  await db.schema
    .createIndex('listings_listed_at')
    .on('listings')
    .columns(['kind', 'status', 'listed_at', 'id', 'area_id', 'bedroom_count', ...more])
    .execute();
  await db.schema.dropIndex('listings_ppsf').execute();
  await db.schema
    .createIndex('listings_ppsf')
    .on('listings')
    .columns(['kind', 'status', 'price_per_sqft', 'id', 'sqft', 'area_id', 'bedroom_count', ...more])
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The descending orders with unknown values last (migrations 009, 018, 019).
    await sql`drop index listings_recommended_desc`.execute(db);
    await sql
      .raw(
        `create index listings_recommended_desc on listings (kind, status, recommended_score desc, listed_at desc nulls last, id desc, area_id, bedroom_count, no_fee${tail})`,
      )
      .execute(db);
    await sql`drop index listings_listed_at_desc`.execute(db);
    await sql
      .raw(
        `create index listings_listed_at_desc on listings (kind, status, listed_at desc nulls last, id desc, area_id, bedroom_count${tail})`,
      )
      .execute(db);
    await sql`drop index listings_ppsf_desc`.execute(db);
    await sql
      .raw(
        `create index listings_ppsf_desc on listings (kind, status, price_per_sqft desc nulls last, id desc, sqft, area_id, bedroom_count${tail})`,
      )
      .execute(db);
  }
  // New indexes have no statistics until analyzed (migration 014 says why).
  await sql`analyze listings`.execute(db);
}
