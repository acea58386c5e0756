import { PostgresAdapter, sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { ChangeEvent, ChangeFilter } from '../domain/change.js';
import type { ListingKind } from '../domain/listing.js';
import type { Database } from './schema.js';

/**
 * PostgreSQL advisory lock taken by every transaction that appends change events. A bigserial id is
 * drawn at insert time but seen at commit; without the lock, a transaction could commit a lower id
 * after a reader's cursor moved past a higher one, and the feed would skip it. With it, ids become
 * visible in order. (SQLite has one writer at a time already.)
 */
const CHANGE_LOG_LOCK = 7_420_001;

/**
 * Takes the change log's append lock for the rest of transaction `trx` (PostgreSQL; nothing to do on
 * SQLite). Call it before the transaction's first write that may hold a lock others wait on.
 */
export async function lockChangeLog(trx: Transaction<Database>): Promise<void> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter) await sql`select pg_advisory_xact_lock(${CHANGE_LOG_LOCK})`.execute(trx);
}

/** Appends events inside `trx`, which must hold {@link lockChangeLog}. */
export async function appendChanges(trx: Transaction<Database>, rows: Insertable<Database['change_events']>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200)
    await trx
      .insertInto('change_events')
      .values(rows.slice(i, i + 200))
      .execute();
}

/** The append-only change log the sync writes (in the same transaction as the changes), read by cursor. */
export class ChangesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Events after the cursor `since` (an event id), oldest first, at most `limit`, that pass `filter`. */
  async page(since: number, limit: number, filter: ChangeFilter = {}): Promise<ChangeEvent[]> {
    let q = this.db.selectFrom('change_events').selectAll().where('id', '>', since);
    if (filter.types?.length) q = q.where('type', 'in', filter.types);
    if (filter.kind) q = q.where('kind', '=', filter.kind);
    if (filter.areaIds) q = q.where('area_id', 'in', filter.areaIds.length ? filter.areaIds : [-1]);
    if (filter.minPrice !== undefined) q = q.where('price', '>=', filter.minPrice);
    if (filter.maxPrice !== undefined) q = q.where('price', '<=', filter.maxPrice);
    if (filter.minBeds !== undefined) q = q.where('bedrooms', '>=', filter.minBeds);
    if (filter.maxBeds !== undefined) q = q.where('bedrooms', '<=', filter.maxBeds);
    const rows = await q.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({
      id: Number(r.id),
      type: r.type,
      listingId: r.listing_id,
      buildingId: r.building_id,
      kind: r.kind as ListingKind | null,
      occurredAt: r.occurred_at,
      data: JSON.parse(r.data),
    }));
  }

  /** The newest event's id (0 when the log is empty). */
  async latestId(): Promise<number> {
    const row = await this.db
      .selectFrom('change_events')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  /** The highest event id retention has removed: a cursor below it cannot be continued without loss. */
  async prunedThrough(): Promise<number> {
    const row = await this.db.selectFrom('change_log_state').select('pruned_through').executeTakeFirst();
    return Number(row?.pruned_through ?? 0);
  }

  /** Removes events that occurred before `before` (UTC ISO 8601) and remembers how far it removed. */
  async prune(before: string): Promise<void> {
    // Most syncs find nothing old enough: said by the occurred_at index at once. The max(id) below is answered by
    // walking the ids down from the newest until one is old enough, past every recent event.
    const old = await this.db.selectFrom('change_events').select('id').where('occurred_at', '<', before).limit(1).executeTakeFirst();
    if (!old) return;
    await this.db.transaction().execute(async (trx) => {
      const last = await trx
        .selectFrom('change_events')
        .select((eb) => eb.fn.max('id').as('id'))
        .where('occurred_at', '<', before)
        .executeTakeFirst();
      if (last?.id === null || last?.id === undefined) return;
      await trx.deleteFrom('change_events').where('id', '<=', Number(last.id)).execute();
      await trx
        .updateTable('change_log_state')
        .set({ pruned_through: Number(last.id) })
        .execute();
    });
  }
}
