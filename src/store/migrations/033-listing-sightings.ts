import { type Kysely, sql } from 'kysely';

/**
 * When a crawl last saw each listing, in a narrow table of its own (`listing_sightings`) rather than on the listing's
 * row (`listings.last_seen_at`, dropped). A crawl sees every listing of its scope, and setting the time on the wide row
 * rewrote every row of the scope at every sync: Manhattan's 45,000 rentals made a commit of 270 to 545 ms on SQLite,
 * held on the event loop (docs/benchmark-history.md, the soak), and on PostgreSQL a new version of each row. A
 * synthetic listing (no crawl sees it) has none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('listing_sightings')
    .addColumn('listing_id', 'text', (c) => c.primaryKey())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into listing_sightings (listing_id, last_seen_at) select id, last_seen_at from listings where synthetic = 0`.execute(db);
  await db.schema.alterTable('listings').dropColumn('last_seen_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('listings')
    .addColumn('last_seen_at', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`update listings set last_seen_at = coalesce((select last_seen_at from listing_sightings where listing_id = listings.id), first_seen_at)`.execute(
    db,
  );
  await db.schema.dropTable('listing_sightings').execute();
}
