import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The default (recommended) order's index also holds `no_fee`, so that a walk of that order tests the
 * filter on the index entry. The recommended score gives ten points for no fee, so the listings with no
 * fee come first in the default order, and a page of those with a fee (`noFee=false`: unknown or no) walked
 * past every one of them reading its table row; now it tests the flag on the entries it passes (figures in
 * commit 4859aba). The key
 * columns in front are unchanged, so the index serves the same orders as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_recommended').execute();
  await db.schema
    .createIndex('listings_recommended')
    .on('listings')
    .columns(['kind', 'status', 'recommended_score', 'listed_at', 'id', 'area_id', 'bedroom_count', 'no_fee'])
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The descending order with unknown dates last (migrations 009, 014).
    await sql`drop index listings_recommended_desc`.execute(db);
    await sql`create index listings_recommended_desc on listings (kind, status, recommended_score desc, listed_at desc nulls last, id desc, area_id, bedroom_count, no_fee)`.execute(
      db,
    );
  }
  // New indexes have no statistics until analyzed (migration 014 says why).
  await sql`analyze listings`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_recommended').execute();
  await db.schema
    .createIndex('listings_recommended')
    .on('listings')
    .columns(['kind', 'status', 'recommended_score', 'listed_at', 'id', 'area_id', 'bedroom_count'])
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index listings_recommended_desc`.execute(db);
    await sql`create index listings_recommended_desc on listings (kind, status, recommended_score desc, listed_at desc nulls last, id desc, area_id, bedroom_count)`.execute(
      db,
    );
  }
}
