import { sql, type Kysely } from 'kysely';

/**
 * Mirroring the real site: areas keep the site's outline; a listing the crawl found new or changed
 * waits for hydration through the detail queries (`needs_detail`); buildings are looked up by listing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('areas').addColumn('outline', 'text').execute();
  await db.schema
    .alterTable('listings')
    .addColumn('needs_detail', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('listings_needs_detail').on('listings').columns(['needs_detail', 'status', 'first_seen_at']).execute();
  await db.schema.createIndex('listings_building').on('listings').column('building_id').execute();
  await sql`update listings set needs_detail = 1 where detail_fetched_at is null`.execute(db);
}
