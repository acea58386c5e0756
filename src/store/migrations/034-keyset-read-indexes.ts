import { type Kysely, sql } from 'kysely';

/**
 * Indexes for the long reads in keyset pages (`src/lib/keyset-pages.ts`), so that each page is a seek rather than a
 * sort of every row it could come from:
 *
 * - `listings_active_by_id`, the active listings of a kind in id order, with borough and the synthetic flag: the
 *   estimates' pool and the valuation (`status = 'ACTIVE' and kind = ? and id > ? order by id`) and a sync's sweep of
 *   its scope's ids (the same, filtered by borough and `synthetic = 0` on the index's entries). Without it SQLite took
 *   one of the search indexes on (kind, status) and sorted all of a kind's active listings for each page of 1,000,
 *   however few rows the page held; with fresh statistics the sweep walked the primary key's order, reading each row
 *   for its borough. Either held the event loop for each page, in every sync's minute of the soak. Partial (`where
 *   status = 'ACTIVE'`): a search, which sorts by anything but id, has an index of its own order that serves it
 *   better. (Figures in docs/benchmark-history.md, "sixth session".)
 * - `listings_data_version` on (data_version, id) rather than (data_version) alone: the search index's delta reads the
 *   rows written since a version in pages by (data_version, id), and the index without id sorted every such row for
 *   each page.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index listings_active_by_id on listings (kind, id, borough_id, synthetic) where status = 'ACTIVE'`.execute(db);
  await db.schema.dropIndex('listings_data_version').execute();
  await db.schema.createIndex('listings_data_version').on('listings').columns(['data_version', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_data_version').execute();
  await db.schema.createIndex('listings_data_version').on('listings').column('data_version').execute();
  await db.schema.dropIndex('listings_active_by_id').execute();
}
