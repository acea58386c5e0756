import { PostgresAdapter, sql, type Kysely, type Selectable } from 'kysely';
import { claimableDeliveries } from './webhook-claims.js';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookSubscriptionsTable } from './schema.js';

export type WebhookSubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** A subscription with the plan and state of the key it belongs to. */
export interface ActiveSubscription extends WebhookSubscriptionRow {
  plan: string;
  key_expires_at: string | null;
}

/** One attempt as recorded: the attempt's row and where its delivery stands after it. */
export interface AttemptRecord {
  attempt: WebhookAttemptsTable;
  outcome: AttemptOutcome;
}

/** Where a delivery stands after an attempt: done, to be tried again at `nextAttemptAt`, or given up. */
export type AttemptOutcome = { status: 'delivered' } | { status: 'pending'; nextAttemptAt: string } | { status: 'dead' };

/**
 * Webhook subscriptions, their deliveries and attempts. Deliveries are claimed with a lease, so that
 * several instances on one PostgreSQL database never attempt the same one at once (`FOR UPDATE SKIP
 * LOCKED`); SQLite serves one instance and serializes writers anyway.
 */
export class WebhooksRepository {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async add(row: WebhookSubscriptionRow): Promise<void> {
    await this.db.insertInto('webhook_subscriptions').values(row).execute();
  }

  /** Every subscription, removed ones included, oldest first. */
  async list(): Promise<WebhookSubscriptionRow[]> {
    return this.db.selectFrom('webhook_subscriptions').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  /** Marks a subscription removed; its pending deliveries are given up. False when none is active with that id. */
  async remove(id: string, at: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('webhook_subscriptions')
        .set({ removed_at: at })
        .where('id', '=', id)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      if (!Number(result.numUpdatedRows)) return false;
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'dead', last_error: 'subscription removed', finished_at: at })
        .where('subscription_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
      return true;
    });
  }

  /** Subscriptions not removed whose key is not revoked, with the key's plan and expiry. */
  async active(): Promise<ActiveSubscription[]> {
    return this.db
      .selectFrom('webhook_subscriptions as s')
      .innerJoin('api_keys as k', 'k.id', 's.key_id')
      .selectAll('s')
      .select(['k.plan as plan', 'k.expires_at as key_expires_at'])
      .where('s.removed_at', 'is', null)
      .where('k.revoked_at', 'is', null)
      .orderBy('s.id')
      .execute();
  }

  /**
   * Creates one pending delivery per event (an event a delivery already exists for is left alone:
   * instances racing on the same events create each once) and moves the subscription's cursor
   * forward to `cursor`, in one transaction.
   */
  async enqueue(
    subscriptionId: string,
    items: { eventId: number; messageId: string; payload: string }[],
    cursor: number,
    at: string,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < items.length; i += 200) {
        await trx
          .insertInto('webhook_deliveries')
          .values(
            items.slice(i, i + 200).map((item) => ({
              subscription_id: subscriptionId,
              event_id: item.eventId,
              message_id: item.messageId,
              payload: item.payload,
              status: 'pending',
              attempts: 0,
              next_attempt_at: at,
              leased_until: null,
              last_status_code: null,
              last_error: null,
              created_at: at,
              finished_at: null,
            })),
          )
          .onConflict((oc) => oc.columns(['subscription_id', 'event_id']).doNothing())
          .execute();
      }
      await trx
        .updateTable('webhook_subscriptions')
        .set({ cursor })
        .where('id', '=', subscriptionId)
        .where('cursor', '<', cursor)
        .execute();
    });
  }

  /**
   * Claims up to `limit` pending deliveries due by `now` whose lease (if any) has run out: each gets a
   * lease until `leaseUntil` and its attempt count goes up by one. Returns them with the subscription's
   * url and secret. Retries that fell due go first, then new deliveries, each oldest due first (a sync enqueues
   * thousands at once, all due before a retry's time: strict due order would starve the retry); at most
   * `perSubscription` of one subscription, none of `except` (subscriptions at their limit of attempts in
   * flight). The candidates are the oldest CLAIM_CANDIDATES of each kind, read through the due indexes of
   * migration 027. On PostgreSQL rows another instance is claiming are skipped, not waited for.
   */
  async claim(
    now: string,
    leaseUntil: string,
    limit: number,
    options: { perSubscription?: number; except?: readonly string[] } = {},
  ): Promise<(WebhookDeliveryRow & { url: string; secret: string })[]> {
    const lockable = claimableDeliveries(this.db, this.postgres, now, limit, options);
    const claimed = await this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ leased_until: leaseUntil, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', lockable)
      .returningAll()
      .execute();
    if (!claimed.length) return [];
    const subscriptions = new Map(
      (
        await this.db
          .selectFrom('webhook_subscriptions')
          .select(['id', 'url', 'secret'])
          .where('id', 'in', [...new Set(claimed.map((d) => d.subscription_id))])
          .execute()
      ).map((s) => [s.id, s]),
    );
    return claimed.map((d) => ({
      ...d,
      id: Number(d.id),
      event_id: Number(d.event_id),
      url: subscriptions.get(d.subscription_id)!.url,
      secret: subscriptions.get(d.subscription_id)!.secret,
    }));
  }

  /** Gives claimed deliveries back unattempted: their lease ends and their attempt count goes back down. */
  async release(ids: readonly number[]): Promise<void> {
    if (!ids.length) return;
    await this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ leased_until: null, attempts: eb('attempts', '-', 1) }))
      .where('id', 'in', [...ids])
      .where('status', '=', 'pending')
      .execute();
  }

  /** Extends the lease of these deliveries, still pending, to `leaseUntil` (attempts that are still running). */
  async renewLeases(ids: readonly number[], leaseUntil: string): Promise<void> {
    if (!ids.length) return;
    await this.db
      .updateTable('webhook_deliveries')
      .set({ leased_until: leaseUntil })
      .where('id', 'in', [...ids])
      .where('status', '=', 'pending')
      .execute();
  }

  /**
   * The delivery queue at `now`: pending deliveries, those due now, the oldest due one's due time (UTC, or
   * null), and dead letters. Read through the due index (status, next attempt).
   */
  async queue(now: string): Promise<{ pending: number; due: number; oldestDueAt: string | null; dead: number }> {
    const [pending, dead] = await Promise.all(
      (['pending', 'dead'] as const).map((status) =>
        this.db
          .selectFrom('webhook_deliveries')
          .select((eb) => [
            eb.fn.countAll<number>().as('n'),
            eb.fn.min('next_attempt_at').as('oldest'),
            eb.fn.sum<number>(eb.case().when('next_attempt_at', '<=', now).then(1).else(0).end()).as('due'),
          ])
          .where('status', '=', status)
          .executeTakeFirstOrThrow(),
      ),
    );
    const oldest = pending.oldest as string | null;
    return {
      pending: Number(pending.n),
      due: Number(pending.due ?? 0),
      oldestDueAt: oldest !== null && oldest <= now ? oldest : null,
      dead: Number(dead.n),
    };
  }

  /** Records an attempt and where the delivery stands after it (the lease ends). */
  async finish(attempt: WebhookAttemptsTable, outcome: AttemptOutcome): Promise<void> {
    await this.finishMany([{ attempt, outcome }]);
  }

  /** Records attempts and where their deliveries stand after them (their leases end), in one transaction. */
  async finishMany(records: readonly AttemptRecord[]): Promise<void> {
    if (!records.length) return;
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < records.length; i += 200) {
        const rows = records.slice(i, i + 200).map((r) => r.attempt);
        await trx
          .insertInto('webhook_attempts')
          .values(rows)
          .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
          .execute();
      }
      for (const { attempt, outcome } of records) {
        await trx
          .updateTable('webhook_deliveries')
          .set({
            status: outcome.status,
            leased_until: null,
            last_status_code: attempt.status_code,
            last_error: attempt.error,
            next_attempt_at: outcome.status === 'pending' ? outcome.nextAttemptAt : sql<string>`next_attempt_at`,
            finished_at: outcome.status === 'pending' ? null : attempt.attempted_at,
          })
          .where('id', '=', attempt.delivery_id)
          .execute();
      }
    });
  }

  /** Deliveries, newest first, optionally of one subscription and/or one status. */
  async deliveries(filter: { subscriptionId?: string; status?: string; limit?: number } = {}): Promise<WebhookDeliveryRow[]> {
    let q = this.db.selectFrom('webhook_deliveries').selectAll();
    if (filter.subscriptionId) q = q.where('subscription_id', '=', filter.subscriptionId);
    if (filter.status) q = q.where('status', '=', filter.status);
    const rows = await q
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 50)
      .execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), event_id: Number(r.event_id) }));
  }

  /** The attempts of one delivery, in order. */
  async attempts(deliveryId: number): Promise<Selectable<WebhookAttemptsTable>[]> {
    return this.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();
  }

  /**
   * Sends a delivery again from the start of the schedule, with the same `webhook-id` and body (a dead
   * letter or a delivered one). False when there is no such delivery or its subscription was removed.
   */
  async redeliver(id: number, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', attempts: 0, next_attempt_at: at, leased_until: null, finished_at: null })
      .where('id', '=', id)
      .where('subscription_id', 'in', (eb) => eb.selectFrom('webhook_subscriptions as s').select('s.id').where('s.removed_at', 'is', null))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
