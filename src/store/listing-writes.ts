/**
 * The statements that write listings, each run in a transaction its caller (`ListingsRepository`) opens:
 * a crawl's upserts with their price and change events, the sweep of listings a complete crawl no longer
 * saw, and what hydration found.
 */
import { PostgresAdapter, sql, type Insertable, type Transaction } from 'kysely';
import { appendChanges, lockChangeLog } from './changes-repository.js';
import type { ListingKind, ListingRecord } from '../domain/listing.js';
import { bumpDataVersion, nextDataVersion } from './data-version.js';
import { recordToRow, SUMMARY_COLUMNS, type CrawledRow, type Derived, type ListingRow, type SummaryRow } from './listing-rows.js';
import type { Database } from './schema.js';
import { keysetPages } from '../lib/keyset-pages.js';
import { turnTaker } from '../lib/stepwise.js';
import { discardStaged, stagedBatches } from './crawl-staging.js';

/** Listings written per statement. */
export const BATCH = 100;

/** Columns only a detail answer fills: a crawl's upsert keeps what hydration stored in them. */
const HYDRATED_COLUMNS = new Set<keyof ListingRow>([
  'listed_at',
  'zip_code',
  'building_id',
  'year_built',
  'pets_allowed',
  'rooms',
  'lease_term',
  'sale_type',
  'monthly_taxes',
  'monthly_maintenance',
  'monthly_common_charges',
  'monthly_charges',
  'details',
  'detail_fetched_at',
  'detail_failures',
  'detail_error',
]);

/**
 * On PostgreSQL, plans the rest of transaction `trx` for each statement's own values. A sync's look-ups
 * by id run as named statements, for which PostgreSQL caches a generic plan after five runs; one cached
 * while a first sync's tables were nearly empty (a sequential scan) kept scanning them whole as they
 * filled, a look-up by ids becoming a scan of the table. Reads keep cached plans: planning a listing's
 * detail on every run costs about half as much CPU again as running it.
 */
export async function planForValues(trx: Transaction<Database>): Promise<void> {
  if (trx.getExecutor().adapter instanceof PostgresAdapter) await sql`set local plan_cache_mode = force_custom_plan`.execute(trx);
}

/** What one applied crawl or fetch changed. */
export interface ApplyResult {
  inserted: number;
  updated: number;
  priceChanges: number;
  delisted: number;
}

/** Computes the derived values of a record (transit score, recommended score). */
export type Deriver = (record: ListingRecord) => Derived;

/** A listing's price (dollars) and status as the store held them before a write. */
export interface StoredState {
  price: number;
  status: string;
}

/**
 * What a write changed, decided outside the store (the sync layer's rules, `sync/listing-changes.ts`):
 * the price-history and change-log rows of a batch given what the store held, and of delisted rows.
 */
export interface ChangeRules {
  upserted(
    batch: { record: ListingRecord; row: CrawledRow }[],
    stored: ReadonlyMap<string, StoredState>,
    at: string,
  ): {
    priceEvents: Database['price_history'][];
    changeEvents: Insertable<Database['change_events']>[];
    inserted: number;
    updated: number;
    priceChanges: number;
  };
  delisted(
    rows: (SummaryRow & { area_id: number | null; kind: string })[],
    at: string,
  ): { priceEvents: Database['price_history'][]; changeEvents: Insertable<Database['change_events']>[] };
}

/** How a crawl is written: the scope to sweep (kind and borough), when the crawl of it was complete. */
export interface CrawlWrite {
  sweep?: { kind: ListingKind; boroughId: number };
}

/**
 * Writes the records crawl `crawlId` staged ({@link stagedBatches}) in transaction `trx`, with the price and change
 * events `rules` derive from what the store held before; sweeps the scope `options.sweep` names (see
 * {@link ListingsRepository.apply}); discards the staged rows. Returns what it changed.
 */
export async function writeCrawl(
  trx: Transaction<Database>,
  crawlId: string,
  derive: Deriver,
  rules: ChangeRules,
  at: string,
  options: CrawlWrite,
): Promise<ApplyResult> {
  await planForValues(trx);
  await lockChangeLog(trx);
  // Every row written carries it; the version moves to it at the end if a row was (store/data-version.ts).
  const version = await nextDataVersion(trx);
  const result: ApplyResult = { inserted: 0, updated: 0, priceChanges: 0, delisted: 0 };
  /** Rows the upserts inserted or changed (an unchanged row is not rewritten, see below). */
  let changedRows = 0;
  // The batches are keyset pages, with turns between them: on SQLite every statement runs on its thread's event loop,
  // and one piece holding a crawl of 45,000 listings held every request behind it (docs/benchmark-history.md, the soak).
  for await (const batch of stagedBatches(trx, crawlId, BATCH)) {
    const existing = new Map(
      (
        await trx
          .selectFrom('listings')
          .select(['id', 'price', 'status'])
          .where(
            'id',
            'in',
            batch.map((r) => r.id),
          )
          .execute()
      ).map((r) => [r.id, { price: Number(r.price), status: r.status }]),
    );
    const rows = batch.map((r) => ({ ...recordToRow(r, derive(r), at), data_version: version }));
    changedRows += await upsertChanged(trx, rows);
    await trx
      .insertInto('listing_sightings')
      .values(batch.map((r) => ({ listing_id: r.id, last_seen_at: at })))
      .onConflict((oc) => oc.column('listing_id').doUpdateSet({ last_seen_at: at }))
      .execute();

    const found = rules.upserted(
      batch.map((record, j) => ({ record, row: rows[j] })),
      existing,
      at,
    );
    result.inserted += found.inserted;
    result.updated += found.updated;
    result.priceChanges += found.priceChanges;
    if (found.priceEvents.length)
      await trx
        .insertInto('price_history')
        .values(found.priceEvents)
        .onConflict((oc) => oc.doNothing())
        .execute();
    await appendChanges(trx, found.changeEvents);
  }
  if (options.sweep) result.delisted = await sweep(trx, options.sweep, crawlId, rules, at, version);
  await discardStaged(trx, crawlId);
  // A crawl that found every listing as stored changed nothing but the times they were seen: the data
  // version stays, and no instance rebuilds what it derived from the listings.
  if (changedRows > 0 || result.delisted > 0) await bumpDataVersion(trx);
  return result;
}

/**
 * Upserts a crawl's `rows` (every one a listing of the crawl, stamped with the write's data version): a new listing
 * is inserted; a stored one is updated only where a column differs, what hydration stored kept. Returns how many
 * rows were inserted or changed.
 */
async function upsertChanged(trx: Transaction<Database>, rows: (CrawledRow & { data_version: number })[]): Promise<number> {
  const columns = (Object.keys(rows[0]) as (keyof (typeof rows)[0])[]).filter(
    // A search node lacks what only a detail gives: keep what hydration stored.
    (key) => key !== 'id' && key !== 'first_seen_at' && key !== 'needs_detail' && !HYDRATED_COLUMNS.has(key),
  );
  const upserted = await trx
    .insertInto('listings')
    .values(rows)
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet((eb) => {
          const set: Record<string, unknown> = Object.fromEntries(columns.map((key) => [key, eb.ref(`excluded.${key}`)]));
          // A new price or status sends the listing back for hydration.
          set.needs_detail = sql`case when listings.price <> excluded.price or listings.status <> excluded.status then 1 else listings.needs_detail end`;
          // The position of a price no longer asked is unknown until the next valuation.
          set.price_position = sql`case when listings.price <> excluded.price then null else listings.price_position end`;
          return set as never;
        })
        // Most of a crawl is listings as they were: rewriting such a row rewrote every index on the
        // table. Only a row that differs is updated here; when it was seen is written apart (listing_sightings).
        .where((eb) =>
          eb.or(
            columns
              .filter((key) => key !== 'data_version')
              .map((key) => sql<boolean>`${sql.ref(`listings.${key}`)} is distinct from ${sql.ref(`excluded.${key}`)}`),
          ),
        ),
    )
    .execute();
  // A driver that does not tell how many rows it wrote is taken to have written them all.
  return upserted.reduce((n, r) => n + (r.numInsertedOrUpdatedRows === undefined ? rows.length : Number(r.numInsertedOrUpdatedRows)), 0);
}

/**
 * Takes every active mirrored listing of `scope` that crawl `crawlId` did not stage off the market, with the events
 * `rules.delisted` gives. Returns how many.
 */
async function sweep(
  trx: Transaction<Database>,
  scope: { kind: ListingKind; boroughId: number },
  crawlId: string,
  rules: ChangeRules,
  at: string,
  version: number,
): Promise<number> {
  // Ids first, in keyset pages by id with turns between them: on SQLite a read runs on the event loop, and one read of
  // Manhattan's 45,000 ids held it for a long while. The pages walk the active listings of the kind by id on the index
  // `listings_active_by_id` (migration 034), testing borough and the synthetic flag on its entries, and each id
  // against the crawl's staged rows by their primary key. (A covering index led by the scope was tried and dropped:
  // without fresh statistics SQLite chose it for searches by borough, a skip-scan slower than their own indexes; this
  // one is partial and in id order, which no search asks for.) Only the listings gone need their summary.
  const gone: string[] = [];
  const activeIds = keysetPages(
    '',
    (after, size) =>
      trx
        .selectFrom('listings')
        .leftJoin('crawl_staging as staged', (join) =>
          join.onRef('staged.listing_id', '=', 'listings.id').on('staged.crawl_id', '=', crawlId),
        )
        .select(['listings.id', 'staged.listing_id as staged'])
        .where('listings.kind', '=', scope.kind)
        .where('listings.borough_id', '=', scope.boroughId)
        .where('listings.status', '=', 'ACTIVE')
        .where('listings.synthetic', '=', 0)
        .where('listings.id', '>', after)
        .orderBy('listings.id')
        .limit(size)
        .execute(),
    (row) => row.id,
  );
  for await (const page of activeIds) for (const { id, staged } of page) if (staged === null) gone.push(id);
  const turn = turnTaker();
  for (let i = 0; i < gone.length; i += BATCH) {
    if (i > 0) await turn();
    const batch = await trx
      .selectFrom('listings')
      .select([...SUMMARY_COLUMNS, 'area_id', 'kind'])
      .where('id', 'in', gone.slice(i, i + BATCH))
      .execute();
    const { priceEvents, changeEvents } = rules.delisted(batch, at);
    await trx
      .updateTable('listings')
      .set({ status: 'OFF_MARKET', delisted_at: at, data_version: version })
      .where(
        'id',
        'in',
        batch.map((r) => r.id),
      )
      .execute();
    await appendChanges(trx, changeEvents);
    await trx
      .insertInto('price_history')
      .values(priceEvents)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  return gone.length;
}
