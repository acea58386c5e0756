import type { Kysely } from 'kysely';

/**
 * Each listing's row version (`listings.data_version`): the listings' data version (migration 011) that the last
 * write of its searched or shown columns moved to, so that a search index built at version V finds every listing
 * written since as `data_version > V` (the index on it) and applies them in place rather than reading every listing
 * again (docs/search-index.md). Rows written before this migration keep 0.
 *
 * A second version, `listings_bulk`, moves with writes whose rows carry no version of their own: the synthetic
 * listings' bulk load and removal (a deleted row leaves nothing to find). An index that sees it move is built again
 * from the whole table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('listings')
    .addColumn('data_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('listings_data_version').on('listings').column('data_version').execute();
  await db.insertInto('data_versions').values({ name: 'listings_bulk', version: 0 }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('data_versions').where('name', '=', 'listings_bulk').execute();
  await db.schema.dropIndex('listings_data_version').execute();
  await db.schema.alterTable('listings').dropColumn('data_version').execute();
}
