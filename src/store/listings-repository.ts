import { CompiledQuery, PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type { HydratedFacts, ListingKind, ListingRecord } from '../domain/listing.js';
import type { ListingRow, SeenListingRow } from './listing-rows.js';
import { writeCrawl, type ApplyResult, type ChangeRules, type CrawlWrite, type Deriver } from './listing-writes.js';
import { writeDetails } from './detail-writes.js';
import { CrawlStaging, newCrawlId, stageRecords } from './crawl-staging.js';
import { type DetailRow, detailQuery, type StoredDetail, storedDetail } from './listing-detail-query.js';
import { bumpDataVersion, nextDataVersion } from './data-version.js';
import type { Database } from './schema.js';
import { listingsWithSightings, NEWEST_SEEN, seenListings } from './seen-listings.js';
import { turnTaker } from '../lib/stepwise.js';

export type { StoredDetail } from './listing-detail-query.js';

/** The listings' versions in `data_versions`: `listings` moves with every write of them, `bulk` with those whose rows carry no version. */
export interface DataVersions {
  listings: number;
  bulk: number;
}

/** Listings in the mirror: upserts with price-history bookkeeping, delisting sweeps (their statements in listing-writes.ts), look-ups. */
export class ListingsRepository {
  private writes = 0;
  /** Where a crawl is staged page by page before {@link applyStaged} writes it. */
  readonly staging: CrawlStaging;

  /**
   * `db` writes; `reader` answers the reads made outside a write (the store's `readDb`: on SQLite another connection),
   * so that no read waits behind a crawl's long write transaction.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly reader: Kysely<Database> = db,
  ) {
    this.staging = new CrawlStaging(db);
  }

  /** How many write transactions this process committed to listings: read caches keyed by it see local writes at once. */
  get writeCount(): number {
    return this.writes;
  }

  /**
   * Stores `records` in one transaction, with the price and change events `rules` derive from what the store held
   * before. When `sweep` is given (the crawl of that kind and borough was complete), every ACTIVE mirrored listing of
   * the scope not in `records` becomes `OFF_MARKET`, with the events `rules.delisted` gives. All or nothing is written.
   */
  apply(records: ListingRecord[], derive: Deriver, rules: ChangeRules, at: string, options: CrawlWrite = {}): Promise<ApplyResult> {
    const id = newCrawlId();
    return this.writeListings((trx) => stageRecords(trx, id, records, at).then(() => writeCrawl(trx, id, derive, rules, at, options)));
  }

  /**
   * Stores what crawl `crawlId` staged ({@link CrawlStaging.sink}) as {@link apply} stores records, and discards the
   * staged rows. When the write fails they stay staged: the caller discards them ({@link CrawlStaging.discard}).
   */
  applyStaged(crawlId: string, derive: Deriver, rules: ChangeRules, at: string, options: CrawlWrite = {}): Promise<ApplyResult> {
    return this.writeListings((trx) => writeCrawl(trx, crawlId, derive, rules, at, options));
  }

  /**
   * Stores what hydration found for each listing, in one transaction and a few statements a batch: the detail's facts,
   * its amenities, the real day of its latest LISTED event, and the listing no longer waits for hydration. A listing
   * date or zip code the detail did not give keeps its stored value.
   */
  async applyDetails(items: { id: string; facts: HydratedFacts }[], at: string): Promise<void> {
    if (items.length) await this.writeListings((trx) => writeDetails(trx, items, at));
  }

  /** Runs `write` in one transaction and counts it ({@link writeCount}). */
  private async writeListings<T>(write: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const outcome = await this.db.transaction().execute(write);
    this.writes++;
    return outcome;
  }

  /**
   * Stores listings' price positions (percent; null: no estimate), `chunk` a statement, in one transaction that moves
   * the data version; nothing when `positions` is empty. A listing deleted meanwhile is passed over.
   */
  async storePricePositions(positions: readonly { id: string; position: number | null }[], chunk: number): Promise<void> {
    if (!positions.length) return;
    const postgres = this.db.getExecutor().adapter instanceof PostgresAdapter;
    await this.writeListings(async (trx) => {
      const version = await nextDataVersion(trx);
      // On SQLite each statement runs on the event loop: requests get turns between chunks.
      const turn = turnTaker();
      for (let i = 0; i < positions.length; i += chunk) {
        if (i > 0) await turn();
        const pairs = JSON.stringify(positions.slice(i, i + chunk).map((p) => [p.id, p.position]));
        // One parameter of [id, position] pairs, as JSON: a chunk of rows in one statement on both databases.
        const given = postgres
          ? sql`select e->>0 as id, (e->>1)::double precision as position from jsonb_array_elements(${pairs}::jsonb) as e`
          : sql`select json_extract(value, '$[0]') as id, json_extract(value, '$[1]') as position from json_each(${pairs})`;
        await sql`update listings set price_position = given.position, data_version = ${version} from (${given}) as given where listings.id = given.id`.execute(
          trx,
        );
      }
      await bumpDataVersion(trx);
    });
  }

  /** Active mirrored (not synthetic) listings, every column, by id: what `seed` derives from. */
  async mirrored(): Promise<ListingRow[]> {
    return this.reader.selectFrom('listings').selectAll().where('status', '=', 'ACTIVE').where('synthetic', '=', 0).orderBy('id').execute();
  }

  /**
   * Amenities of every mirrored (not synthetic) listing that has some, by listing id: what the seed's
   * synthetic listings copy. The synthetic ones' own are left out: at a million listings, reading them
   * too was most of a seed's start.
   */
  async mirroredAmenities(): Promise<Map<string, string[]>> {
    const byListing = new Map<string, string[]>();
    const rows = await this.reader
      .selectFrom('listing_amenities')
      .select(['listing_id', 'amenity'])
      .where('listing_id', 'in', (eb) => eb.selectFrom('listings').select('id').where('synthetic', '=', 0))
      .execute();
    for (const { listing_id, amenity } of rows) {
      const amenities = byListing.get(listing_id);
      if (amenities) amenities.push(amenity);
      else byListing.set(listing_id, [amenity]);
    }
    return byListing;
  }

  /**
   * The listings' data version: a counter that every write transaction that changes listings, from any
   * instance, increments (migration 011; a crawl that found them as stored and only marks them seen does
   * not). Two equal readings mean no listing changed in between.
   */
  async dataVersion(): Promise<number> {
    const row = await this.reader.selectFrom('data_versions').select('version').where('name', '=', 'listings').executeTakeFirstOrThrow();
    return Number(row.version);
  }

  /**
   * The listings' data version ({@link dataVersion}) and their bulk version (migration 031: moved by writes whose rows
   * carry no version of their own), read together.
   */
  async dataVersions(): Promise<DataVersions> {
    const rows = await this.reader
      .selectFrom('data_versions')
      .select(['name', 'version'])
      .where('name', 'in', ['listings', 'listings_bulk'])
      .execute();
    const of = (name: string) => Number(rows.find((r) => r.name === name)?.version ?? 0);
    return { listings: of('listings'), bulk: of('listings_bulk') };
  }

  /**
   * Active listings waiting for hydration, oldest first: at most `limit`, of one kind when given.
   * Read through the backlog's partial index (migration 016): its two values are literals on purpose. Read on the
   * writer's connection: the hydration's lanes filter it by the batches in flight, and a read on another connection
   * could start before a batch that has just left the flight commits, and so take its listings a second time.
   */
  async backlog(limit: number, kind?: ListingKind): Promise<{ id: string; kind: ListingKind }[]> {
    let q = this.db
      .selectFrom('listings')
      .select(['id', 'kind'])
      .where('needs_detail', '=', sql.lit(1))
      .where('status', '=', sql.lit('ACTIVE'));
    // The kind as an expression, which no index serves: given the column, SQLite read every active listing
    // of the kind through an index that leads with it and sorted them, where the backlog's index has the
    // order and few entries to pass.
    if (kind) q = q.where(sql<string>`${sql.ref('kind')} || ''`, '=', kind);
    const rows = await q.orderBy('first_seen_at').orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ id: r.id, kind: r.kind as ListingKind }));
  }

  /** How many active listings wait for hydration. */
  async backlogCount(): Promise<number> {
    const row = await this.reader
      .selectFrom('listings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('needs_detail', '=', sql.lit(1))
      .where('status', '=', sql.lit('ACTIVE'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Counts one failed detail request against each of these listings still waiting for hydration, keeps
   * `error` as its cause, and parks those that reach `maxFailures` (`needs_detail` 2: out of the backlog
   * until a crawl sees them change). Returns the ids parked now.
   */
  async recordDetailFailures(ids: string[], error: string, maxFailures: number): Promise<string[]> {
    if (!ids.length) return [];
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('listings')
        .set((eb) => ({ detail_failures: eb('detail_failures', '+', 1), detail_error: error.slice(0, 500) }))
        .where('id', 'in', ids)
        .where('needs_detail', '=', 1)
        .execute();
      const parked = await trx
        .updateTable('listings')
        .set({ needs_detail: 2 })
        .where('id', 'in', ids)
        .where('needs_detail', '=', 1)
        .where('detail_failures', '>=', maxFailures)
        .returning('id')
        .execute();
      return parked.map((r) => r.id);
    });
  }

  /** How many active listings are parked (their details failed `HYDRATION_MAX_FAILURES` times). */
  async parkedCount(): Promise<number> {
    const row = await this.reader
      .selectFrom('listings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('needs_detail', '=', sql.lit(2))
      .where('status', '=', sql.lit('ACTIVE'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The parked active listings, at most `limit`, with their failures and last error (for the operator). */
  async parked(limit = 100): Promise<{ id: string; kind: string; detailFailures: number; detailError: string | null }[]> {
    const rows = await this.reader
      .selectFrom('listings')
      .select(['id', 'kind', 'detail_failures', 'detail_error'])
      .where('needs_detail', '=', sql.lit(2))
      .where('status', '=', sql.lit('ACTIVE'))
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, kind: r.kind, detailFailures: Number(r.detail_failures), detailError: r.detail_error }));
  }

  /** Every listing ever seen in a building (any status): for inventories. */
  async unitsOfBuilding(buildingId: string): Promise<{ kind: ListingKind; status: string; bedroomCount: number | null; price: number }[]> {
    const rows = await this.reader
      .selectFrom('listings')
      .select(['kind', 'status', 'bedroom_count', 'price'])
      .where('building_id', '=', buildingId)
      .execute();
    return rows.map((r) => ({ kind: r.kind as ListingKind, status: r.status, bedroomCount: r.bedroom_count, price: Number(r.price) }));
  }

  /** A listing in the building with this id or slug (the newest seen), or undefined. */
  async findInBuilding(idOrSlug: string): Promise<SeenListingRow | undefined> {
    return seenListings(this.reader)
      .where((eb) => eb.or([eb('building_id', '=', idOrSlug), eb('building_slug', '=', idOrSlug)]))
      .orderBy(NEWEST_SEEN, 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** A listing's row with when a crawl last saw it, or undefined. */
  async findById(id: string): Promise<SeenListingRow | undefined> {
    return seenListings(this.reader).where('id', '=', id).executeTakeFirst();
  }

  /** The id of the listing at this path on the upstream site (the newest seen), or undefined. */
  async idByUrlPath(urlPath: string): Promise<string | undefined> {
    return (
      await listingsWithSightings(this.reader).select('id').where('url_path', '=', urlPath).orderBy(NEWEST_SEEN, 'desc').executeTakeFirst()
    )?.id;
  }

  /**
   * A listing's row, amenities (by name, sorted) and the mirror's price events (oldest first) in one
   * query ({@link detailQuery}): a detail answer is one round trip, not three. The statement is built once per
   * repository and run with each id. Undefined when the mirror does not hold the listing.
   */
  async detailById(id: string): Promise<StoredDetail | undefined> {
    this.detailQuery ??= detailQuery(this.db);
    const result = await this.reader.executeQuery<DetailRow>(CompiledQuery.raw(this.detailQuery.sql, [id]));
    return result.rows[0] && storedDetail(result.rows[0]);
  }

  private detailQuery: CompiledQuery | undefined;

  async amenities(id: string): Promise<string[]> {
    const rows = await this.reader
      .selectFrom('listing_amenities')
      .select('amenity')
      .where('listing_id', '=', id)
      .orderBy('amenity')
      .execute();
    return rows.map((r) => r.amenity);
  }

  /** Whether any active listing is stored (one index probe, for health checks). */
  async hasActive(): Promise<boolean> {
    return (await this.reader.selectFrom('listings').select('id').where('status', '=', 'ACTIVE').limit(1).executeTakeFirst()) !== undefined;
  }

  async count(kind?: ListingKind): Promise<number> {
    let q = this.reader
      .selectFrom('listings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'ACTIVE');
    if (kind) q = q.where('kind', '=', kind);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }
}
