import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/** Due deliveries of each kind (retries, new) a claim chooses among: a bound on its work, not a tuning. */
const CLAIM_CANDIDATES = 512;

/**
 * The ids of the deliveries a claim takes ({@link WebhooksRepository.claim}), as a subquery: pending and due by `now`,
 * their lease (if any) run out; retries first, then new deliveries, each oldest due first; at most `perSubscription`
 * of one subscription, none of `except`, `limit` in all. On PostgreSQL the rows are locked, those another instance
 * holds skipped.
 */
export function claimableDeliveries(
  db: Kysely<Database>,
  postgres: boolean,
  now: string,
  limit: number,
  options: { perSubscription?: number; except?: readonly string[] },
) {
  const due = (retries: boolean) => {
    let q = db
      .selectFrom('webhook_deliveries')
      .select(['id', 'subscription_id', 'next_attempt_at', sql<number>`${sql.lit(retries ? 1 : 0)}`.as('retry')])
      .where('status', '=', sql.lit('pending'))
      .where('attempts', retries ? '>' : '=', sql.lit(0))
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<=', now)]));
    if (options.except?.length) q = q.where('subscription_id', 'not in', [...options.except]);
    return q.orderBy('next_attempt_at').orderBy('id').limit(CLAIM_CANDIDATES);
  };
  const candidates = db
    .selectFrom(due(true).as('retries'))
    .selectAll()
    .unionAll(db.selectFrom(due(false).as('fresh')).selectAll());
  const ranked = db
    .selectFrom(candidates.as('c'))
    .select([
      'c.id',
      'c.retry',
      'c.next_attempt_at',
      sql<number>`row_number() over (partition by c.subscription_id order by c.retry desc, c.next_attempt_at, c.id)`.as('rank'),
    ]);
  const chosen = db
    .selectFrom(ranked.as('r'))
    .select('r.id')
    .where('r.rank', '<=', options.perSubscription ?? limit)
    .orderBy('r.retry', 'desc')
    .orderBy('r.next_attempt_at')
    .orderBy('r.id')
    .limit(limit);
  // A window cannot be locked: PostgreSQL locks the rows it chose, skipping those another instance holds, and
  // checks the lease again on each row it locks (one another instance claimed meanwhile has a lease now).
  return postgres
    ? db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('id', 'in', chosen)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<=', now)]))
        .forUpdate()
        .skipLocked()
    : chosen;
}
