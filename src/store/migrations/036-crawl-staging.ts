import type { Kysely } from 'kysely';

/**
 * A scope's crawl staged in the store page by page (`crawl_staging`), then written to the listings from it in one
 * transaction: held whole in memory, a large scope's records were kept through the crawl and its write, and they were
 * most of what a sync added to its thread's heap in the soak (docs/benchmark-history.md). A row is one listing of one
 * crawl (`crawl_id`, random), its record as JSON; `staged_at` (UTC ISO 8601) lets a crawl whose process died be
 * cleared later.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('crawl_staging')
    .addColumn('crawl_id', 'text', (c) => c.notNull())
    .addColumn('listing_id', 'text', (c) => c.notNull())
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('staged_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('crawl_staging_pk', ['crawl_id', 'listing_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('crawl_staging').execute();
}
