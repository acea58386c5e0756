import type { Kysely, Selectable } from 'kysely';
import type { Plan } from '../config.js';
import type { BillingSubscriptionsTable, Database } from './schema.js';

export type SubscriptionRow = Selectable<BillingSubscriptionsTable>;

/** A key to issue to a subscription at its checkout, sealed until the success page shows it (billing/key-seal.ts). */
export interface KeyToIssue {
  sessionDigest: string;
  sealed: string;
  id: string;
  digest: string;
  hint: string;
  label: string;
}

/** What one application of the provider's state changes, all in one transaction. */
export interface BillingChange {
  /** The event applied (recorded once: a second application of its id changes nothing). */
  event?: { id: string; type: string; outcome: 'applied' | 'ignored'; createdAt: string };
  /** The subscription as read (its `read_at` the instant the read started); `keyStatus` and `plan` are what its keys get. */
  subscription?: { row: SubscriptionRow; keyStatus: string; plan: Plan | null };
  /** A key for the subscription's checkout, issued unless the checkout has one already. */
  issue?: KeyToIssue;
}

/**
 * Subscriptions as last read from the provider, the provider's events applied, and the keys issued at checkouts
 * (docs/billing.md). Every change is one transaction: a failure leaves nothing half applied.
 */
export class BillingRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Whether the event `id` was applied (or ignored) already. */
  async eventSeen(id: string): Promise<boolean> {
    return (await this.db.selectFrom('billing_events').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  }

  /**
   * Applies `change` in one transaction. The event's id is recorded first: when it is there already, nothing else is
   * done (`duplicate`). The subscription's state replaces the stored one unless that was read later (`read_at`); when it
   * does, each key of the subscription gets its plan and status. A key is issued when the checkout has none, with the
   * stored subscription's plan and status, and none when that plan is unknown. Instants are UTC ISO 8601.
   */
  async apply(change: BillingChange, at: string): Promise<{ duplicate: boolean; subscriptionApplied: boolean; keyIssued: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      if (change.event) {
        const recorded = await trx
          .insertInto('billing_events')
          .values({
            id: change.event.id,
            type: change.event.type,
            outcome: change.event.outcome,
            created_at: change.event.createdAt,
            applied_at: at,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!recorded) return { duplicate: true, subscriptionApplied: false, keyIssued: false };
      }
      let subscriptionApplied = false;
      if (change.subscription) {
        const { row, keyStatus, plan } = change.subscription;
        const { id: _id, provider: _provider, ...state } = row;
        const written = await trx
          .insertInto('billing_subscriptions')
          .values(row)
          .onConflict((oc) => oc.column('id').doUpdateSet(state).where('billing_subscriptions.read_at', '<=', row.read_at))
          .returning('id')
          .executeTakeFirst();
        subscriptionApplied = written !== undefined;
        if (subscriptionApplied) {
          await trx
            .updateTable('api_keys')
            .set(plan ? { subscription_status: keyStatus, plan } : { subscription_status: keyStatus })
            .where('subscription_id', '=', row.id)
            .execute();
        }
      }
      let keyIssued = false;
      const issue = change.issue;
      if (issue && change.subscription) {
        const stored = await trx
          .selectFrom('billing_subscriptions')
          .selectAll()
          .where('id', '=', change.subscription.row.id)
          .executeTakeFirstOrThrow();
        if (stored.plan) {
          const reveal = await trx
            .insertInto('key_reveals')
            .values({ session_digest: issue.sessionDigest, key_id: issue.id, sealed: issue.sealed, created_at: at, revealed_at: null })
            .onConflict((oc) => oc.column('session_digest').doNothing())
            .returning('key_id')
            .executeTakeFirst();
          if (reveal) {
            await trx
              .insertInto('api_keys')
              .values({
                id: issue.id,
                digest: issue.digest,
                prefix_hint: issue.hint,
                plan: stored.plan,
                label: issue.label,
                created_at: at,
                expires_at: null,
                revoked_at: null,
                last_used_at: null,
                origins: null,
                operations: null,
                source: 'stripe',
                subscription_id: stored.id,
                // A subscription whose plan is known gives its keys its own status.
                subscription_status: stored.status,
                subject: `subscription:${stored.id}`,
              })
              .execute();
            keyIssued = true;
          }
        }
      }
      return { duplicate: false, subscriptionApplied, keyIssued };
    });
  }

  /**
   * Takes the sealed key of a checkout session out of the table, once: the first call gets it and marks it shown at
   * `at`; any later one (or one racing it on another instance) gets null.
   */
  async takeSealedKey(sessionDigest: string, at: string): Promise<{ keyId: string; sealed: string } | null> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('key_reveals')
        .select(['key_id', 'sealed'])
        .where('session_digest', '=', sessionDigest)
        .executeTakeFirst();
      if (!row?.sealed) return null;
      const taken = await trx
        .updateTable('key_reveals')
        .set({ sealed: null, revealed_at: at })
        .where('session_digest', '=', sessionDigest)
        .where('sealed', 'is not', null)
        .executeTakeFirst();
      return Number(taken.numUpdatedRows) === 1 ? { keyId: row.key_id, sealed: row.sealed } : null;
    });
  }

  /** The key a checkout session issued and when it was shown (null while not yet); undefined when it issued none. */
  async issuedKey(sessionDigest: string): Promise<{ keyId: string; revealedAt: string | null } | undefined> {
    const row = await this.db
      .selectFrom('key_reveals')
      .select(['key_id', 'revealed_at'])
      .where('session_digest', '=', sessionDigest)
      .executeTakeFirst();
    return row ? { keyId: row.key_id, revealedAt: row.revealed_at } : undefined;
  }

  async subscription(id: string): Promise<SubscriptionRow | undefined> {
    return this.db.selectFrom('billing_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
