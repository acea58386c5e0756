import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Plan } from '../config.js';
import type { ApiKeysTable, Database } from './schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** API keys, stored by digest only; `prefix_hint` keeps the first 8 characters of the uuid for listings. */
export class KeysRepository {
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly db: Kysely<Database>) {}

  /** Calls `listener` after every change this repository makes to keys (insert, revoke, update). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Tells the listeners that keys changed: called after each change made here, and by whoever writes keys in a transaction of its own (billing). */
  changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Stores a key's digest with its plan; returns the new key id. Instants are UTC ISO 8601. `source` defaults to `cli`. */
  async insert(input: {
    digest: string;
    hint: string;
    plan: Plan;
    label: string | null;
    expiresAt: string | null;
    createdAt: string;
    origins?: string[] | null;
    operations?: string[] | null;
    source?: 'cli' | 'import';
  }): Promise<string> {
    const id = randomUUID();
    await this.db
      .insertInto('api_keys')
      .values({
        id,
        digest: input.digest,
        prefix_hint: input.hint,
        plan: input.plan,
        label: input.label,
        created_at: input.createdAt,
        expires_at: input.expiresAt,
        revoked_at: null,
        last_used_at: null,
        origins: input.origins?.length ? input.origins.join(',') : null,
        operations: input.operations?.length ? input.operations.join(',') : null,
        source: input.source ?? 'cli',
      })
      .execute();
    this.changed();
    return id;
  }

  /**
   * Replaces the key `id` by a new one with the same plan, label, origins, operations, source and subscription, whose
   * limits and quota count against the same subject: the old key's own (`key:<digest>`) unless it had one already. The
   * old key works until `graceUntil` (or its own expiry, if sooner) and is marked replaced at `at`. One transaction.
   * Returns the new key's id; undefined when `id` is not a key that works (unknown, revoked, expired or already replaced).
   */
  async rotate(id: string, next: { digest: string; hint: string }, at: string, graceUntil: string): Promise<string | undefined> {
    const newId = await this.db.transaction().execute(async (trx) => {
      const old = await trx.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
      if (!old || old.revoked_at || old.replaced_at || (old.expires_at !== null && old.expires_at <= at)) return undefined;
      const created = randomUUID();
      await trx
        .insertInto('api_keys')
        .values({
          id: created,
          digest: next.digest,
          prefix_hint: next.hint,
          plan: old.plan,
          label: old.label,
          created_at: at,
          expires_at: old.expires_at,
          revoked_at: null,
          last_used_at: null,
          origins: old.origins,
          operations: old.operations,
          source: old.source,
          subscription_id: old.subscription_id,
          subscription_status: old.subscription_status,
          subject: old.subject ?? `key:${old.digest}`,
        })
        .execute();
      await trx
        .updateTable('api_keys')
        .set({
          replaced_at: at,
          subject: old.subject ?? `key:${old.digest}`,
          expires_at: old.expires_at !== null && old.expires_at < graceUntil ? old.expires_at : graceUntil,
        })
        .where('id', '=', id)
        .execute();
      return created;
    });
    if (newId) this.changed();
    return newId;
  }

  async findByDigest(digest: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('digest', '=', digest).executeTakeFirst();
  }

  async findById(id: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().orderBy('created_at').execute();
  }

  /** Every key, oldest first, with the customer of its subscription (null for a key of the command line). */
  async listWithCustomers(): Promise<(ApiKeyRow & { customer_id: string | null })[]> {
    return this.db
      .selectFrom('api_keys')
      .leftJoin('billing_subscriptions', 'billing_subscriptions.id', 'api_keys.subscription_id')
      .selectAll('api_keys')
      .select('billing_subscriptions.customer_id')
      .orderBy('api_keys.created_at')
      .execute();
  }

  /** Marks a key revoked; false when there is no such active key. */
  async revoke(id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    this.changed();
    return Number(result.numUpdatedRows) > 0;
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  /** Updates plan, label and expiry of the key with this digest (import of an existing key). */
  async update(digest: string, input: { plan: Plan; label: string | null; expiresAt: string | null }): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ plan: input.plan, label: input.label, expires_at: input.expiresAt })
      .where('digest', '=', digest)
      .execute();
    this.changed();
  }
}
