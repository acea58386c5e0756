import type { Kysely } from 'kysely';

/** Daily market snapshots: one row a day, kind and area (0: the whole city), its figures as JSON. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('market_snapshots')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('area_id', 'integer', (c) => c.notNull())
    .addColumn('figures', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('market_snapshots_pk', ['kind', 'area_id', 'day'])
    .execute();
}
