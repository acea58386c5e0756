import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The indexes a search walks in the order of its page (by price; by the recommended order, the
 * default) also hold the area and the bedroom count, the commonest filters: a search of some areas by
 * price then tests each entry it passes on the index itself and reads the table row only for the
 * entries that match, where before it read the row of every entry to learn its area. SQLite defers the
 * row's seek until a term needs a column the index lacks. PostgreSQL's B-tree tests the bedrooms inside
 * the index too, but version 15 keeps a list of areas on a later key column out of an ordered scan's
 * index condition (it is tested on the row; version 17 lifts this).
 *
 * Figures before and after are in commit c569dc3. The key columns in front are unchanged, so each index
 * serves the same orders as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_price').execute();
  await db.schema
    .createIndex('listings_price')
    .on('listings')
    .columns(['kind', 'status', 'price', 'id', 'area_id', 'bedroom_count'])
    .execute();
  await db.schema.dropIndex('listings_recommended').execute();
  await db.schema
    .createIndex('listings_recommended')
    .on('listings')
    .columns(['kind', 'status', 'recommended_score', 'listed_at', 'id', 'area_id', 'bedroom_count'])
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    // The default order descending (migration 009).
    await sql`drop index listings_recommended_desc`.execute(db);
    await sql`create index listings_recommended_desc on listings (kind, status, recommended_score desc, listed_at desc nulls last, id desc, area_id, bedroom_count)`.execute(
      db,
    );
  } else {
    // SQLite keeps statistics per index, and a new index has none until analyzed (the planner would
    // weigh it by guesses). Once, at migration.
    await sql`analyze listings`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_price').execute();
  await db.schema.createIndex('listings_price').on('listings').columns(['kind', 'status', 'price', 'id']).execute();
  await db.schema.dropIndex('listings_recommended').execute();
  await db.schema
    .createIndex('listings_recommended')
    .on('listings')
    .columns(['kind', 'status', 'recommended_score', 'listed_at', 'id'])
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index listings_recommended_desc`.execute(db);
    await sql`create index listings_recommended_desc on listings (kind, status, recommended_score desc, listed_at desc nulls last, id desc)`.execute(
      db,
    );
  }
}
