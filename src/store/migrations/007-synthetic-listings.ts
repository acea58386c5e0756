import type { Kysely } from 'kysely';

/**
 * Marks listings that `nyc-listings seed` derived for benchmarks (1) apart from mirrored ones (0). A
 * sync never sweeps a synthetic listing: the upstream does not have it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('listings')
    .addColumn('synthetic', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
