/**
 * A crawl staged in the store (`crawl_staging`, migration 036): each page's records are kept as they arrive, in short
 * statements of their own, and the write reads them back in batches inside its one transaction. So the sync holds one
 * page and one batch in memory, not a scope's whole crawl (what Manhattan's rentals held: docs/benchmark-history.md,
 * the soak), and a crawl that fails still changes no listing: its staged rows are discarded.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { ListingRecord } from '../domain/listing.js';
import { keysetPages } from '../lib/keyset-pages.js';
import type { Database } from './schema.js';

/** Rows of staged records per statement (four values each: well under SQLite's and PostgreSQL's bound on values). */
const STAGE_ROWS = 500;

/** A new crawl's id. */
export function newCrawlId(): string {
  return randomUUID();
}

/**
 * Stages `records` under crawl `crawlId` at `at` (UTC ISO 8601). A listing staged already by this crawl is replaced:
 * a crawl that saw it twice keeps what it saw last.
 */
export async function stageRecords(db: Kysely<Database>, crawlId: string, records: readonly ListingRecord[], at: string): Promise<void> {
  // One row a listing per statement, the last record given (PostgreSQL refuses a statement that upserts a row twice).
  const unique = [...new Map(records.map((record) => [record.id, record])).values()];
  for (let i = 0; i < unique.length; i += STAGE_ROWS) {
    const rows = unique
      .slice(i, i + STAGE_ROWS)
      .map((record) => ({ crawl_id: crawlId, listing_id: record.id, record: JSON.stringify(record), staged_at: at }));
    await db
      .insertInto('crawl_staging')
      .values(rows)
      .onConflict((oc) => oc.columns(['crawl_id', 'listing_id']).doUpdateSet((eb) => ({ record: eb.ref('excluded.record') })))
      .execute();
  }
}

/** How many listings crawl `crawlId` staged. */
export async function stagedCount(db: Kysely<Database>, crawlId: string): Promise<number> {
  const row = await db
    .selectFrom('crawl_staging')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('crawl_id', '=', crawlId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Discards what crawl `crawlId` staged. */
export async function discardStaged(db: Kysely<Database>, crawlId: string): Promise<void> {
  await db.deleteFrom('crawl_staging').where('crawl_id', '=', crawlId).execute();
}

/** Discards every crawl staged before `before` (UTC ISO 8601): what a process that died mid-crawl left. Returns how many rows. */
export async function discardStagedBefore(db: Kysely<Database>, before: string): Promise<number> {
  const [result] = await db.deleteFrom('crawl_staging').where('staged_at', '<', before).execute();
  return Number(result?.numDeletedRows ?? 0);
}

/** The records crawl `crawlId` staged, in batches of at most `size`, in the order of their ids (keyset pages). */
export async function* stagedBatches(trx: Transaction<Database>, crawlId: string, size: number): AsyncGenerator<ListingRecord[]> {
  const pages = keysetPages(
    '',
    (after, limit) =>
      trx
        .selectFrom('crawl_staging')
        .select(['listing_id', 'record'])
        .where('crawl_id', '=', crawlId)
        .where('listing_id', '>', after)
        .orderBy('listing_id')
        .limit(limit)
        .execute(),
    (row) => row.listing_id,
    size,
  );
  for await (const page of pages) yield page.map((row) => JSON.parse(row.record) as ListingRecord);
}

/** Age past which a staged crawl is taken as left by a process that died mid-crawl: no crawl runs so long. */
const LEFTOVER_AGE_MS = 6 * 3_600_000;

/**
 * The staging statements that run outside a write's transaction, on the store's writing handle. Their times are the
 * machine's, not a sync's clock (which a test or the local market may move).
 */
export class CrawlStaging {
  constructor(private readonly db: Kysely<Database>) {}

  /** Where crawl `crawlId` puts its pages (the crawler's `CrawlSink`): staged, or all discarded to start over. */
  sink(crawlId: string): { put(records: ListingRecord[]): Promise<void>; clear(): Promise<void> } {
    return {
      put: (records) => stageRecords(this.db, crawlId, records, new Date().toISOString()),
      clear: () => this.discard(crawlId),
    };
  }

  /** How many listings crawl `crawlId` staged. */
  count(crawlId: string): Promise<number> {
    return stagedCount(this.db, crawlId);
  }

  /** Discards what crawl `crawlId` staged. */
  discard(crawlId: string): Promise<void> {
    return discardStaged(this.db, crawlId);
  }

  /** Discards what crawls left staged over {@link LEFTOVER_AGE_MS} ago (a process that died mid-crawl); returns how many rows. */
  discardLeftovers(): Promise<number> {
    return discardStagedBefore(this.db, new Date(Date.now() - LEFTOVER_AGE_MS).toISOString());
  }
}
