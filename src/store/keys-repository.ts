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

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /** Stores a key's digest with its plan; returns the new key id. Instants are UTC ISO 8601. */
  async insert(input: {
    digest: string;
    hint: string;
    plan: Plan;
    label: string | null;
    expiresAt: string | null;
    createdAt: string;
    origins?: string[] | null;
    operations?: string[] | null;
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
      })
      .execute();
    this.changed();
    return id;
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
