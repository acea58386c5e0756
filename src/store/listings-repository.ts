import type { Kysely, Transaction } from 'kysely';
import type { ListingKind, ListingRecord, PriceEvent } from '../domain/listing.js';
import { recordToRow, type Derived, type ListingRow } from './listing-rows.js';
import type { Database } from './schema.js';

const BATCH = 100;

/** What one applied crawl or fetch changed. */
export interface ApplyResult {
  inserted: number;
  updated: number;
  priceChanges: number;
  delisted: number;
}

/** Computes the derived values of a record (transit score, recommended score). */
export type Deriver = (record: ListingRecord) => Derived;

function pct(from: number, to: number): number {
  return Math.round(((to - from) / from) * 10000) / 100;
}

/** Listings in the mirror: upserts with price-history bookkeeping, delisting sweeps, look-ups. */
export class ListingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Stores `records` in one transaction. New listings get a `LISTED` event, changed prices a
   * `PRICE_INCREASE`/`PRICE_DECREASE` event, relisted ones `LISTED` again. When `sweep` is given (the
   * crawl of that kind and borough was complete), every ACTIVE listing of the scope not in `records`
   * becomes `OFF_MARKET` with a `DELISTED` event. Either everything is written or nothing.
   */
  async apply(
    records: ListingRecord[],
    derive: Deriver,
    at: string,
    options: { sweep?: { kind: ListingKind; boroughId: number }; detail?: boolean } = {},
  ): Promise<ApplyResult> {
    return this.db.transaction().execute(async (trx) => {
      const result: ApplyResult = { inserted: 0, updated: 0, priceChanges: 0, delisted: 0 };
      const date = at.slice(0, 10);
      for (let i = 0; i < records.length; i += BATCH) {
        const batch = records.slice(i, i + BATCH);
        const existing = new Map(
          (await trx.selectFrom('listings').select(['id', 'price', 'status']).where('id', 'in', batch.map((r) => r.id)).execute()).map(
            (r) => [r.id, r],
          ),
        );
        const rows = batch.map((r) => recordToRow(r, derive(r), at, options.detail ? at : null));
        await trx
          .insertInto('listings')
          .values(rows)
          .onConflict((oc) =>
            oc.column('id').doUpdateSet((eb) => {
              const set: Record<string, unknown> = {};
              for (const key of Object.keys(rows[0]) as (keyof ListingRow)[]) {
                if (key === 'id' || key === 'first_seen_at') continue;
                if (key === 'detail_fetched_at' && !options.detail) continue;
                // A search node lacks the detail fields: keep what a detail fetch stored.
                if (key === 'details' && !options.detail) continue;
                set[key] = eb.ref(`excluded.${key}`);
              }
              return set as never;
            }),
          )
          .execute();
        await trx.deleteFrom('listing_amenities').where('listing_id', 'in', batch.map((r) => r.id)).execute();
        const amenityRows = batch.flatMap((r) => r.amenities.map((amenity) => ({ listing_id: r.id, amenity })));
        if (amenityRows.length) await trx.insertInto('listing_amenities').values(amenityRows).execute();

        const events: Database['price_history'][] = [];
        for (const r of batch) {
          const before = existing.get(r.id);
          if (!before) {
            result.inserted++;
            events.push({ listing_id: r.id, recorded_at: at, date: (r.listedAt ?? at).slice(0, 10), price: r.price, event: 'LISTED', pct_change: null });
            continue;
          }
          result.updated++;
          const oldPrice = Number(before.price);
          if (before.status !== 'ACTIVE' && r.status === 'ACTIVE') {
            events.push({ listing_id: r.id, recorded_at: at, date, price: r.price, event: 'LISTED', pct_change: oldPrice === r.price ? null : pct(oldPrice, r.price) });
          } else if (oldPrice !== r.price) {
            result.priceChanges++;
            events.push({
              listing_id: r.id,
              recorded_at: at,
              date,
              price: r.price,
              event: r.price > oldPrice ? 'PRICE_INCREASE' : 'PRICE_DECREASE',
              pct_change: pct(oldPrice, r.price),
            });
          }
        }
        if (events.length) await trx.insertInto('price_history').values(events).onConflict((oc) => oc.doNothing()).execute();
      }
      if (options.sweep) result.delisted = await this.sweep(trx, options.sweep, new Set(records.map((r) => r.id)), at);
      return result;
    });
  }

  private async sweep(trx: Transaction<Database>, scope: { kind: ListingKind; boroughId: number }, seen: Set<string>, at: string): Promise<number> {
    const active = await trx
      .selectFrom('listings')
      .select(['id', 'price'])
      .where('kind', '=', scope.kind)
      .where('borough_id', '=', scope.boroughId)
      .where('status', '=', 'ACTIVE')
      .execute();
    const gone = active.filter((r) => !seen.has(r.id));
    for (let i = 0; i < gone.length; i += BATCH) {
      const batch = gone.slice(i, i + BATCH);
      await trx.updateTable('listings').set({ status: 'OFF_MARKET', delisted_at: at }).where('id', 'in', batch.map((r) => r.id)).execute();
      await trx
        .insertInto('price_history')
        .values(batch.map((r) => ({ listing_id: r.id, recorded_at: at, date: at.slice(0, 10), price: Number(r.price), event: 'DELISTED', pct_change: null })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    return gone.length;
  }

  async findById(id: string): Promise<ListingRow | undefined> {
    return this.db.selectFrom('listings').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findByUrlPath(urlPath: string): Promise<ListingRow | undefined> {
    return this.db.selectFrom('listings').selectAll().where('url_path', '=', urlPath).orderBy('last_seen_at', 'desc').executeTakeFirst();
  }

  async amenities(id: string): Promise<string[]> {
    const rows = await this.db.selectFrom('listing_amenities').select('amenity').where('listing_id', '=', id).orderBy('amenity').execute();
    return rows.map((r) => r.amenity);
  }

  /** The mirror's price events of a listing, oldest first. */
  async priceHistory(id: string): Promise<PriceEvent[]> {
    const rows = await this.db
      .selectFrom('price_history')
      .selectAll()
      .where('listing_id', '=', id)
      .orderBy('recorded_at')
      .orderBy('event')
      .execute();
    return rows.map((r) => ({ date: r.date, price: Number(r.price), event: r.event, pctChange: r.pct_change }));
  }

  async count(kind?: ListingKind): Promise<number> {
    let q = this.db.selectFrom('listings').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'ACTIVE');
    if (kind) q = q.where('kind', '=', kind);
    return Number((await q.executeTakeFirstOrThrow()).n);
  }
}
