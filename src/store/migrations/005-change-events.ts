import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The change feed: an append-only log of what each sync changed, with a monotonic id as the cursor,
 * and the highest id pruned by retention (a cursor below it can no longer be continued).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('change_events')
    .addColumn('id', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('type', 'text', (c) => c.notNull())
    // A listing event names its listing and kind; a building event (building.updated) its building.
    .addColumn('listing_id', 'text')
    .addColumn('building_id', 'text')
    .addColumn('kind', 'text')
    .addColumn('area_id', 'integer')
    // The listing's price (dollars) and bedrooms after the change: the feed's, stream's and webhooks' filters.
    .addColumn('price', 'bigint')
    .addColumn('bedrooms', 'integer')
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('change_events_occurred').on('change_events').column('occurred_at').execute();
  await db.schema
    .createTable('change_log_state')
    .addColumn('pruned_through', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into change_log_state (pruned_through) values (0)`.execute(db);
}
