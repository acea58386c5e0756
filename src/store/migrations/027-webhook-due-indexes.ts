import { sql, type Kysely } from 'kysely';

/**
 * The webhook claim reads its candidates through two partial indexes, each in order of due time: retries
 * (pending deliveries attempted before) and new deliveries (never attempted). A claim takes the oldest few of
 * each rather than sorting every due delivery, and a retry that fell due goes before new deliveries however many
 * a sync just enqueued (they all fall due at once, before the retry's time).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_due_retries on webhook_deliveries (next_attempt_at, id) where status = 'pending' and attempts > 0`.execute(
    db,
  );
  await sql`create index webhook_deliveries_due_new on webhook_deliveries (next_attempt_at, id) where status = 'pending' and attempts = 0`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due_retries').execute();
  await db.schema.dropIndex('webhook_deliveries_due_new').execute();
}
