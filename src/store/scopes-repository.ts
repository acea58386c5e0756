import type { Kysely } from 'kysely';
import type { Database, SyncScopesTable } from './schema.js';

/** Scope key of a listing kind in one borough (API borough id): `sale:100`, `rental:200`, ... */
export function scopeKey(kind: 'sale' | 'rental', boroughId: number): string {
  return `${kind}:${boroughId}`;
}
/** Scope key of the area list. */
export const AREAS_SCOPE = 'areas';
/** Scope keys of NYC Open Data's datasets in `sync_scopes` (and `/v1/health`). */
export const RECORDED_SALES_SCOPE = 'recorded-sales';
export const TAX_LOTS_SCOPE = 'tax-lots';
/** Both, as `/v1/health` lists them. */
export const OPEN_DATA_SCOPES: readonly string[] = [TAX_LOTS_SCOPE, RECORDED_SALES_SCOPE];
/** Coordinator key of an open data sync (one at a time, on every instance). */
export const OPEN_DATA_KEY = 'open-data';

/** Sync state of one scope (`sale:100`, `rental:200`, `areas`, ...); instants are UTC ISO 8601. */
export type ScopeState = SyncScopesTable;

/** How the last crawl of a scope went: its parts, how many were split, whether every part completed. */
export interface CrawlReport {
  scope: string;
  parts: number;
  splits: number;
  complete: boolean;
  at: string;
}

/** Whether a scope's latest sync failed (its last error is newer than its last success). */
export function scopeFailing(s: ScopeState): boolean {
  return s.last_error_at !== null && (s.last_success_at === null || s.last_error_at > s.last_success_at);
}

/** Bookkeeping of crawls: last success, last attempt, last error of each scope. */
export class ScopesRepository {
  private writes = 0;

  /** `db` writes; `reader` (the store's `readDb`) answers reads, which so never wait behind a long write transaction. */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly reader: Kysely<Database> = db,
  ) {}

  /** How many writes this process made to scope states: a cache of them keyed by it sees local writes at once. */
  get writeCount(): number {
    return this.writes;
  }

  async all(): Promise<ScopeState[]> {
    return this.reader.selectFrom('sync_scopes').selectAll().orderBy('scope').execute();
  }

  async get(scope: string): Promise<ScopeState | undefined> {
    return this.reader.selectFrom('sync_scopes').selectAll().where('scope', '=', scope).executeTakeFirst();
  }

  async recordAttempt(scope: string, at: string): Promise<void> {
    await this.db
      .insertInto('sync_scopes')
      .values({ scope, last_attempt_at: at, last_success_at: null, last_error: null, last_error_at: null, listing_count: null })
      .onConflict((oc) => oc.column('scope').doUpdateSet({ last_attempt_at: at }))
      .execute();
    this.writes++;
  }

  async recordSuccess(scope: string, at: string, listingCount: number | null): Promise<void> {
    await this.db
      .insertInto('sync_scopes')
      .values({ scope, last_attempt_at: at, last_success_at: at, last_error: null, last_error_at: null, listing_count: listingCount })
      .onConflict((oc) => oc.column('scope').doUpdateSet({ last_success_at: at, listing_count: listingCount }))
      .execute();
    this.writes++;
  }

  async recordFailure(scope: string, at: string, message: string): Promise<void> {
    await this.db
      .insertInto('sync_scopes')
      .values({ scope, last_attempt_at: at, last_success_at: null, last_error: message, last_error_at: at, listing_count: null })
      .onConflict((oc) => oc.column('scope').doUpdateSet({ last_error: message, last_error_at: at }))
      .execute();
    this.writes++;
  }
}
