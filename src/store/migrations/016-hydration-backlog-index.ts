import { sql, type Kysely } from 'kysely';

/**
 * The hydration backlog (active listings whose details are still to fetch, oldest first, then by id)
 * is read through a partial index that holds only the listings waiting, in that order. It replaces
 * `listings_needs_detail` (migration 002: needs_detail, status, first_seen_at), which held every
 * listing and lacked the id: a crawl gives all its new listings one `first_seen_at`, so each batch of
 * the backlog sorted every waiting listing to find its hundred, batch after batch of a full hydration
 * (figures in commit c5bf3cd); after this migration a batch reads its hundred index entries. The new index costs a write only while a listing waits.
 * `backlog` and `backlogCount` write the two values as literals, so that both planners can prove the
 * index's condition whatever the statement's parameters.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_needs_detail').execute();
  await sql`create index listings_backlog on listings (first_seen_at, id) where needs_detail = 1 and status = 'ACTIVE'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_backlog').execute();
  await db.schema.createIndex('listings_needs_detail').on('listings').columns(['needs_detail', 'status', 'first_seen_at']).execute();
}
