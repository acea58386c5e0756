import { CompiledQuery, PostgresAdapter, sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import { jsonArrayFrom as pgJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import { appendChanges, lockChangeLog } from './changes-repository.js';
import type { HydratedFacts, ListingKind, ListingRecord } from '../domain/listing.js';
import type { PriceEvent } from '../wire/listing.js';
import { monthlyCharges } from '../domain/monthly-cost.js';
import { bumpDataVersion } from './data-version.js';
import { recordToRow, SUMMARY_COLUMNS, type Derived, type ListingRow, type SummaryRow } from './listing-rows.js';
import type { Database } from './schema.js';

const BATCH = 100;


/** Columns hydration writes. */
const DETAIL_UPDATES = [
  'listed_at', 'zip_code', 'building_id', 'year_built', 'pets_allowed', 'rooms', 'lease_term', 'monthly_maintenance', 'monthly_taxes',
  'monthly_charges', 'details', 'detail_fetched_at', 'needs_detail',
] as const satisfies readonly (keyof ListingRow)[];

/** Columns only a detail answer fills: a crawl's upsert keeps what hydration stored in them. */
const HYDRATED_COLUMNS = new Set<keyof ListingRow>([
  'listed_at', 'zip_code', 'building_id', 'year_built', 'pets_allowed', 'rooms', 'lease_term', 'sale_type',
  'monthly_taxes', 'monthly_maintenance', 'monthly_common_charges', 'monthly_charges', 'details', 'detail_fetched_at',
]);

/**
 * On PostgreSQL, plans the rest of transaction `trx` for each statement's own values. A sync's look-ups
 * by id run as named statements, for which PostgreSQL caches a generic plan after five runs; one cached
 * while a first sync's tables were nearly empty (a sequential scan) kept scanning them whole as they
 * filled, a look-up by ids becoming a scan of the table. Reads keep cached plans: planning a listing's
 * detail on every run costs about half as much CPU again as running it.
 */
async function planForValues(trx: Transaction<Database>): Promise<void> {
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

/** A stored listing as its detail needs it: the row, its amenities by name (sorted), its price events (oldest first). */
export interface StoredDetail {
  row: ListingRow;
  amenities: string[];
  history: PriceEvent[];
}

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
    batch: { record: ListingRecord; row: ListingRow }[],
    stored: ReadonlyMap<string, StoredState>,
    at: string,
  ): { priceEvents: Database['price_history'][]; changeEvents: Insertable<Database['change_events']>[]; inserted: number; updated: number; priceChanges: number };
  delisted(
    rows: (SummaryRow & { area_id: number | null; kind: string })[],
    at: string,
  ): { priceEvents: Database['price_history'][]; changeEvents: Insertable<Database['change_events']>[] };
}

/** Listings in the mirror: upserts with price-history bookkeeping, delisting sweeps, look-ups. */
export class ListingsRepository {
  private writes = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** How many write transactions this process committed to listings: read caches keyed by it see local writes at once. */
  get version(): number {
    return this.writes;
  }

  /**
   * Stores `records` in one transaction, with the price and change events `rules` derive from what the
   * store held before. When `sweep` is given (the crawl of that kind and borough was complete), every
   * ACTIVE mirrored listing of the scope not in `records` becomes `OFF_MARKET`, with the events
   * `rules.delisted` gives. Either everything is written or nothing.
   */
  async apply(
    records: ListingRecord[],
    derive: Deriver,
    rules: ChangeRules,
    at: string,
    options: { sweep?: { kind: ListingKind; boroughId: number }; detail?: boolean } = {},
  ): Promise<ApplyResult> {
    const outcome = await this.db.transaction().execute(async (trx) => {
      await planForValues(trx);
      await lockChangeLog(trx);
      const result: ApplyResult = { inserted: 0, updated: 0, priceChanges: 0, delisted: 0 };
      /** Rows the upserts inserted or changed (an unchanged row is not rewritten, see below). */
      let changedRows = 0;
      for (let i = 0; i < records.length; i += BATCH) {
        const batch = records.slice(i, i + BATCH);
        const existing = new Map(
          (await trx.selectFrom('listings').select(['id', 'price', 'status']).where('id', 'in', batch.map((r) => r.id)).execute()).map(
            (r) => [r.id, { price: Number(r.price), status: r.status }],
          ),
        );
        const rows = batch.map((r) => recordToRow(r, derive(r), at, options.detail ? at : null));
        const columns = (Object.keys(rows[0]) as (keyof ListingRow)[]).filter(
          // A search node lacks what only a detail gives: keep what hydration stored.
          (key) => key !== 'id' && key !== 'first_seen_at' && key !== 'needs_detail' && (options.detail || !HYDRATED_COLUMNS.has(key)),
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
                set.needs_detail = options.detail
                  ? 0
                  : sql`case when listings.price <> excluded.price or listings.status <> excluded.status then 1 else listings.needs_detail end`;
                return set as never;
              })
              // Most of a crawl is listings as they were: rewriting such a row rewrote every index on the
              // table. Only a row that differs is updated here; the time it was seen is set below.
              .where((eb) =>
                eb.or([
                  ...columns.filter((key) => key !== 'last_seen_at').map((key) => sql<boolean>`${sql.ref(`listings.${key}`)} is distinct from ${sql.ref(`excluded.${key}`)}`),
                  ...(options.detail ? [eb('listings.needs_detail', '<>', 0)] : []),
                ]),
              ),
          )
          .execute();
        // A driver that does not tell how many rows it wrote is taken to have written them all.
        changedRows += upserted.reduce((n, r) => n + (r.numInsertedOrUpdatedRows === undefined ? batch.length : Number(r.numInsertedOrUpdatedRows)), 0);
        // A row just inserted was written with it already.
        const seen = batch.filter((r) => existing.has(r.id)).map((r) => r.id);
        if (seen.length) await trx.updateTable('listings').set({ last_seen_at: at }).where('id', 'in', seen).execute();
        if (options.detail) {
          await trx.deleteFrom('listing_amenities').where('listing_id', 'in', batch.map((r) => r.id)).execute();
          const amenityRows = batch.flatMap((r) => r.amenities.map((amenity) => ({ listing_id: r.id, amenity })));
          if (amenityRows.length) await trx.insertInto('listing_amenities').values(amenityRows).execute();
        }

        const found = rules.upserted(batch.map((record, j) => ({ record, row: rows[j] })), existing, at);
        result.inserted += found.inserted;
        result.updated += found.updated;
        result.priceChanges += found.priceChanges;
        if (found.priceEvents.length) await trx.insertInto('price_history').values(found.priceEvents).onConflict((oc) => oc.doNothing()).execute();
        await appendChanges(trx, found.changeEvents);
      }
      if (options.sweep) result.delisted = await this.sweep(trx, options.sweep, new Set(records.map((r) => r.id)), rules, at);
      // A crawl that found every listing as stored changed nothing but the times they were seen: the data
      // version stays, and no instance rebuilds what it derived from the listings.
      if (changedRows > 0 || result.delisted > 0 || options.detail) await bumpDataVersion(trx);
      return result;
    });
    this.writes++;
    return outcome;
  }

  private async sweep(trx: Transaction<Database>, scope: { kind: ListingKind; boroughId: number }, seen: Set<string>, rules: ChangeRules, at: string): Promise<number> {
    const active = await trx
      .selectFrom('listings')
      .select([...SUMMARY_COLUMNS, 'area_id', 'kind'])
      .where('kind', '=', scope.kind)
      .where('borough_id', '=', scope.boroughId)
      .where('status', '=', 'ACTIVE')
      .where('synthetic', '=', 0)
      .execute();
    const gone = active.filter((r) => !seen.has(r.id));
    for (let i = 0; i < gone.length; i += BATCH) {
      const batch = gone.slice(i, i + BATCH);
      const { priceEvents, changeEvents } = rules.delisted(batch, at);
      await trx.updateTable('listings').set({ status: 'OFF_MARKET', delisted_at: at }).where('id', 'in', batch.map((r) => r.id)).execute();
      await appendChanges(trx, changeEvents);
      await trx.insertInto('price_history').values(priceEvents).onConflict((oc) => oc.doNothing()).execute();
    }
    return gone.length;
  }

  /**
   * Stores what hydration found for each listing, in one transaction and a few statements a batch: the
   * detail's facts, its amenities, the real day of its latest LISTED event, and the listing no longer
   * waits for hydration. A listing date or zip code the detail did not give keeps its stored value.
   */
  async applyDetails(items: { id: string; facts: HydratedFacts }[], at: string): Promise<void> {
    if (!items.length) return;
    await this.db.transaction().execute(async (trx) => {
      await planForValues(trx);
      for (let i = 0; i < items.length; i += BATCH) {
        const batch = items.slice(i, i + BATCH);
        const ids = batch.map((item) => item.id);
        const stored = new Map((await trx.selectFrom('listings').selectAll().where('id', 'in', ids).execute()).map((r) => [r.id, r]));
        const present = batch.filter((item) => stored.has(item.id));
        if (!present.length) continue;
        const rows = present.map(({ id, facts }): ListingRow => {
          const row = stored.get(id)!;
          return {
            ...row,
            listed_at: facts.listedAt ?? row.listed_at,
            zip_code: facts.zipCode ?? row.zip_code,
            building_id: facts.buildingId,
            year_built: facts.yearBuilt,
            pets_allowed: facts.petsAllowed === null ? null : facts.petsAllowed ? 1 : 0,
            rooms: facts.rooms,
            lease_term: facts.leaseTerm,
            monthly_maintenance: facts.monthlyMaintenance,
            monthly_taxes: facts.monthlyTaxes,
            monthly_charges: monthlyCharges({ maintenance: facts.monthlyMaintenance, commonCharges: row.monthly_common_charges, taxes: facts.monthlyTaxes }),
            details: JSON.stringify({ ...(JSON.parse(row.details) as Record<string, unknown>), photos: facts.photos, floorPlanKey: facts.floorPlanKey }),
            detail_fetched_at: at,
            needs_detail: 0,
          };
        });
        await trx
          .insertInto('listings')
          .values(rows)
          .onConflict((oc) => oc.column('id').doUpdateSet((eb) => Object.fromEntries(DETAIL_UPDATES.map((c) => [c, eb.ref(`excluded.${c}`)])) as never))
          .execute();
        await trx.deleteFrom('listing_amenities').where('listing_id', 'in', rows.map((r) => r.id)).execute();
        const amenityRows = present.flatMap(({ id, facts }) => facts.amenities.map((amenity) => ({ listing_id: id, amenity })));
        if (amenityRows.length) await trx.insertInto('listing_amenities').values(amenityRows).execute();
        // The crawl that found a listing dated its LISTED event the day it saw it; the detail knows the real day.
        const listedDay = new Map(present.filter((item) => item.facts.listedAt).map((item) => [item.id, item.facts.listedAt!.slice(0, 10)]));
        if (!listedDay.size) continue;
        const latest = new Map<string, Database['price_history']>();
        for (const event of await trx.selectFrom('price_history').selectAll().where('event', '=', 'LISTED').where('listing_id', 'in', [...listedDay.keys()]).execute()) {
          const seen = latest.get(event.listing_id);
          if (!seen || event.recorded_at > seen.recorded_at) latest.set(event.listing_id, event);
        }
        const redated = [...latest.values()].filter((e) => e.date !== listedDay.get(e.listing_id)).map((e) => ({ ...e, date: listedDay.get(e.listing_id)! }));
        if (redated.length) {
          await trx
            .insertInto('price_history')
            .values(redated)
            .onConflict((oc) => oc.columns(['listing_id', 'recorded_at', 'event']).doUpdateSet((eb) => ({ date: eb.ref('excluded.date') })))
            .execute();
        }
      }
      await bumpDataVersion(trx);
    });
    this.writes++;
  }

  /** Active mirrored (not synthetic) listings, every column, by id: what `seed` derives from. */
  async mirrored(): Promise<ListingRow[]> {
    return this.db.selectFrom('listings').selectAll().where('status', '=', 'ACTIVE').where('synthetic', '=', 0).orderBy('id').execute();
  }

  /**
   * Amenities of every mirrored (not synthetic) listing that has some, by listing id: what the seed's
   * synthetic listings copy. The synthetic ones' own are left out (at a million listings, reading them
   * too took 3.8 s of a seed's start).
   */
  async mirroredAmenities(): Promise<Map<string, string[]>> {
    const byListing = new Map<string, string[]>();
    const rows = await this.db
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
    const row = await this.db.selectFrom('data_versions').select('version').where('name', '=', 'listings').executeTakeFirstOrThrow();
    return Number(row.version);
  }

  /**
   * The areas of `kind` that have active listings, ascending (null last: listings of no known area).
   * A loose index scan: one seek into the area-price index per area (a recursive query), so its cost
   * grows with the number of areas, not of listings; a DISTINCT over the rows grows with the listings and,
   * on SQLite, blocks the event loop for as long.
   */
  async activeAreas(kind: ListingKind): Promise<(number | null)[]> {
    const { rows } = await sql<{ area_id: number }>`with recursive seen(area_id) as (
        select min(area_id) from listings where kind = ${kind} and status = 'ACTIVE'
        union all
        select (select min(l.area_id) from listings l where l.kind = ${kind} and l.status = 'ACTIVE' and l.area_id > seen.area_id)
        from seen where seen.area_id is not null
      ) select area_id from seen where area_id is not null`.execute(this.db);
    const areas: (number | null)[] = rows.map((r) => Number(r.area_id));
    const unplaced = await this.db.selectFrom('listings').select('id').where('kind', '=', kind).where('status', '=', 'ACTIVE').where('area_id', 'is', null).limit(1).executeTakeFirst();
    if (unplaced) areas.push(null);
    return areas;
  }

  /**
   * Bedroom counts and prices (US dollars) of the active listings of `kind` in one area (null: of no
   * known area), cheapest first, read from the area-price index alone; only prices within `range`
   * (`min` inclusive, or exclusive with `minExclusive`; `max` inclusive) and at most `range.limit` rows when given.
   */
  async activePrices(
    kind: ListingKind,
    areaId: number | null,
    range: { min?: number; minExclusive?: boolean; max?: number; limit?: number } = {},
  ): Promise<{ bedroom_count: number | null; price: number }[]> {
    let q = this.db.selectFrom('listings').select(['bedroom_count', 'price']).where('kind', '=', kind).where('status', '=', 'ACTIVE');
    q = areaId === null ? q.where('area_id', 'is', null) : q.where('area_id', '=', areaId);
    if (range.min !== undefined) q = q.where('price', range.minExclusive ? '>' : '>=', range.min);
    if (range.max !== undefined) q = q.where('price', '<=', range.max);
    q = q.orderBy('price');
    if (range.limit !== undefined) q = q.limit(range.limit);
    return (await q.execute()) as { bedroom_count: number | null; price: number }[];
  }

  /**
   * Active listings waiting for hydration, oldest first: at most `limit`, of one kind when given.
   * Read through the backlog's partial index (migration 016): its two values are literals on purpose.
   */
  async backlog(limit: number, kind?: ListingKind): Promise<{ id: string; kind: ListingKind }[]> {
    let q = this.db.selectFrom('listings').select(['id', 'kind']).where('needs_detail', '=', sql.lit(1)).where('status', '=', sql.lit('ACTIVE'));
    // The kind as an expression, which no index serves: given the column, SQLite read every active listing
    // of the kind through an index that leads with it and sorted them, where the backlog's index has the
    // order and few entries to pass.
    if (kind) q = q.where(sql<string>`${sql.ref('kind')} || ''`, '=', kind);
    const rows = await q.orderBy('first_seen_at').orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ id: r.id, kind: r.kind as ListingKind }));
  }

  /** How many active listings wait for hydration. */
  async backlogCount(): Promise<number> {
    const row = await this.db.selectFrom('listings').select((eb) => eb.fn.countAll<number>().as('n')).where('needs_detail', '=', sql.lit(1)).where('status', '=', sql.lit('ACTIVE')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Every listing ever seen in a building (any status): for inventories. */
  async unitsOfBuilding(buildingId: string): Promise<{ kind: ListingKind; status: string; bedroomCount: number | null; price: number }[]> {
    const rows = await this.db.selectFrom('listings').select(['kind', 'status', 'bedroom_count', 'price']).where('building_id', '=', buildingId).execute();
    return rows.map((r) => ({ kind: r.kind as ListingKind, status: r.status, bedroomCount: r.bedroom_count, price: Number(r.price) }));
  }

  /** A listing in the building with this id or slug (the newest seen), or undefined. */
  async findInBuilding(idOrSlug: string): Promise<ListingRow | undefined> {
    return this.db
      .selectFrom('listings')
      .selectAll()
      .where((eb) => eb.or([eb('building_id', '=', idOrSlug), eb('building_slug', '=', idOrSlug)]))
      .orderBy('last_seen_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  async findById(id: string): Promise<ListingRow | undefined> {
    return this.db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The id of the listing at this path on the upstream site (the newest seen), or undefined. */
  async idByUrlPath(urlPath: string): Promise<string | undefined> {
    return (await this.db.selectFrom('listings').select('id').where('url_path', '=', urlPath).orderBy('last_seen_at', 'desc').executeTakeFirst())?.id;
  }

  /**
   * A listing's row, amenities (by name, sorted) and the mirror's price events (oldest first) in one
   * query: a detail answer is one round trip, not three. The statement is built once per repository and
   * run with each id. Undefined when the mirror does not hold the listing.
   */
  async detailById(id: string): Promise<StoredDetail | undefined> {
    this.detailQuery ??= this.buildDetailQuery();
    const result = await this.db.executeQuery<ListingRow & { amenity_rows: unknown; history_rows: unknown }>(
      CompiledQuery.raw(this.detailQuery.sql, [id]),
    );
    const found = result.rows[0];
    if (!found) return undefined;
    // The row is answered as read, its two aggregate columns left on it: a rest copy of a row this wide
    // (better-sqlite3 makes it a dictionary-mode object) is a noticeable share of a detail's CPU.
    const { amenity_rows, history_rows } = found;
    const row: ListingRow = found;
    // SQLite answers the aggregated rows as JSON text; pg has parsed them already.
    const json = <T>(v: unknown): T[] => (typeof v === 'string' ? (JSON.parse(v) as T[]) : ((v as T[] | null) ?? []));
    return {
      row,
      amenities: json<{ amenity: string }>(amenity_rows).map((a) => a.amenity),
      history: json<{ date: string; price: number | string; event: string; pct_change: number | null }>(history_rows).map((h) => ({
        date: h.date,
        price: Number(h.price),
        event: h.event,
        pctChange: h.pct_change,
      })),
    };
  }

  private detailQuery: CompiledQuery | undefined;

  /** The detail query, compiled with a stand-in id: its one parameter is the listing id. */
  private buildDetailQuery(): CompiledQuery {
    const jsonArrayFrom = this.db.getExecutor().adapter instanceof PostgresAdapter ? pgJsonArrayFrom : sqliteJsonArrayFrom;
    const compiled = this.db
      .selectFrom('listings')
      .selectAll('listings')
      .select((eb) => [
        jsonArrayFrom(eb.selectFrom('listing_amenities').select('amenity').whereRef('listing_id', '=', 'listings.id').orderBy('amenity')).as('amenity_rows'),
        jsonArrayFrom(
          eb
            .selectFrom('price_history')
            .select(['date', 'price', 'event', 'pct_change'])
            .whereRef('listing_id', '=', 'listings.id')
            .orderBy('recorded_at')
            .orderBy('event'),
        ).as('history_rows'),
      ])
      .where('listings.id', '=', '')
      .compile();
    if (compiled.parameters.length !== 1) throw new Error(`the detail query has ${compiled.parameters.length} parameters, not 1`);
    return compiled;
  }

  async amenities(id: string): Promise<string[]> {
    const rows = await this.db.selectFrom('listing_amenities').select('amenity').where('listing_id', '=', id).orderBy('amenity').execute();
    return rows.map((r) => r.amenity);
  }

  /** Whether any active listing is stored (one index probe, for health checks). */
  async hasActive(): Promise<boolean> {
    return (await this.db.selectFrom('listings').select('id').where('status', '=', 'ACTIVE').limit(1).executeTakeFirst()) !== undefined;
  }

  async count(kind?: ListingKind): Promise<number> {
    let q = this.db.selectFrom('listings').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'ACTIVE');
    if (kind) q = q.where('kind', '=', kind);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }
}
