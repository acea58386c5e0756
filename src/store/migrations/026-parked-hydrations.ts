import { sql, type Kysely } from 'kysely';

/**
 * A listing whose detail keeps failing is parked instead of asked for again and again: `detail_failures`
 * counts its failed detail requests and `detail_error` keeps the last cause; at `HYDRATION_MAX_FAILURES`
 * its `needs_detail` becomes 2, which the backlog's partial index (migration 016, `needs_detail = 1`) leaves
 * out, so the rest of the backlog goes on. A crawl that sees its price or status change puts it back (1).
 * The parked listings have an index of their own, for `/v1/health` and the metrics to count them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('listings')
    .addColumn('detail_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('listings').addColumn('detail_error', 'text').execute();
  await sql`create index listings_parked on listings (id) where needs_detail = 2 and status = 'ACTIVE'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_parked').execute();
  await db.schema.alterTable('listings').dropColumn('detail_error').execute();
  await db.schema.alterTable('listings').dropColumn('detail_failures').execute();
}
