import type { Kysely } from 'kysely';

/**
 * A counter per table that every write transaction changing it increments (`listings`: the listings
 * repository does, in the same transaction): an instance reads one row to learn whether any instance
 * has changed it since, instead of reading the table again. Read caches too large to rebuild on a timer
 * (the search totals' price ladders) are rebuilt only when it moved.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('data_versions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('data_versions').values({ name: 'listings', version: 0 }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('data_versions').execute();
}
