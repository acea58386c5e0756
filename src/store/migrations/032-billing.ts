import type { Kysely } from 'kysely';

/**
 * Plans sold through a subscription provider (issue 65, docs/billing.md).
 *
 * - `api_keys` says where a key came from (`source`: `cli`, `import` or `stripe`), the subscription it was issued to
 *   and that subscription's status as last applied (so that a request reads one row), the subject its limits and quota
 *   are counted against when it is not the key's own digest (a rotated key shares its predecessor's), and when a
 *   rotation replaced it (its `expires_at` is then the end of the grace).
 * - `billing_subscriptions`: each subscription's state as last read from the provider, with the instant that read
 *   started (`read_at`): a state read earlier never overwrites one read later.
 * - `billing_events`: each provider event applied, by id, so that a duplicate is applied once.
 * - `key_reveals`: a new key sealed with its checkout session's id until the success page shows it once.
 * - `quota_usage_days`: requests counted by subject and day (UTC), beside the month's count, for the account page's
 *   chart.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('cli'))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('subscription_id', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('subscription_status', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('subject', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('replaced_at', 'text').execute();
  await db.schema.createIndex('api_keys_subscription').on('api_keys').column('subscription_id').execute();

  await db.schema
    .createTable('billing_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('plan', 'text')
    .addColumn('price_ids', 'text', (c) => c.notNull())
    .addColumn('current_period_end', 'text')
    .addColumn('cancel_at', 'text')
    .addColumn('ended_at', 'text')
    .addColumn('read_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('billing_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('key_reveals')
    .addColumn('session_digest', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('sealed', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revealed_at', 'text')
    .execute();

  await db.schema
    .createTable('quota_usage_days')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('quota_usage_days_pk', ['subject', 'day'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('quota_usage_days').execute();
  await db.schema.dropTable('key_reveals').execute();
  await db.schema.dropTable('billing_events').execute();
  await db.schema.dropTable('billing_subscriptions').execute();
  await db.schema.dropIndex('api_keys_subscription').execute();
  for (const column of ['replaced_at', 'subject', 'subscription_status', 'subscription_id', 'source'])
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
}
