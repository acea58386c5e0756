import type { Insertable } from 'kysely';
import type { ListingRecord } from '../domain/listing.js';
import type { ListingRow, SummaryRow } from '../store/listing-rows.js';
import { rowToSummary } from '../presenters/listing.js';
import type { ChangeRules, StoredState } from '../store/listing-writes.js';
import type { Database } from '../store/schema.js';

type PriceEvent = Database['price_history'];
type ChangeEventRow = Insertable<Database['change_events']>;

/** Percent change from `from` to `to`, rounded to 0.01. */
function pct(from: number, to: number): number {
  return Math.round(((to - from) / from) * 10000) / 100;
}

/**
 * The mirror's rules for what a crawl or fetch changed, as pure functions of what the store held and
 * what the site now says (the repository only writes what they return):
 * - a listing not held before: a `LISTED` price event (dated its listing day) and `listing.listed`;
 * - a status that changed: `listing.status_changed`; back to ACTIVE: a `LISTED` price event again;
 * - a price that changed: `listing.price_changed` and a `PRICE_INCREASE`/`PRICE_DECREASE` event with
 *   the percent change;
 * - a listing a complete crawl no longer found: `OFF_MARKET`, a `DELISTED` price event and
 *   `listing.status_changed` (ACTIVE to OFF_MARKET).
 * Every change event carries the listing's summary after the change.
 */
export const LISTING_CHANGE_RULES: ChangeRules = {
  upserted(batch: { record: ListingRecord; row: ListingRow }[], stored: ReadonlyMap<string, StoredState>, at: string) {
    const date = at.slice(0, 10);
    const priceEvents: PriceEvent[] = [];
    const changeEvents: ChangeEventRow[] = [];
    let inserted = 0;
    let updated = 0;
    let priceChanges = 0;
    for (const { record: r, row } of batch) {
      const change = (type: string, facts: Record<string, unknown>) =>
        changeEvents.push({
          type,
          listing_id: r.id,
          kind: r.kind,
          area_id: r.areaId,
          price: r.price,
          bedrooms: r.bedroomCount,
          occurred_at: at,
          data: JSON.stringify({ listing: rowToSummary(row, new Date(at)), ...facts }),
        });
      const before = stored.get(r.id);
      if (!before) {
        inserted++;
        change('listing.listed', { oldPrice: null, newPrice: r.price, pctChange: null, fromStatus: null, toStatus: r.status });
        priceEvents.push({
          listing_id: r.id,
          recorded_at: at,
          date: (r.listedAt ?? at).slice(0, 10),
          price: r.price,
          event: 'LISTED',
          pct_change: null,
        });
        continue;
      }
      updated++;
      const oldPrice = before.price;
      const pctChange = oldPrice === r.price ? null : pct(oldPrice, r.price);
      if (before.status !== r.status)
        change('listing.status_changed', { oldPrice, newPrice: r.price, pctChange, fromStatus: before.status, toStatus: r.status });
      else if (oldPrice !== r.price)
        change('listing.price_changed', { oldPrice, newPrice: r.price, pctChange, fromStatus: r.status, toStatus: r.status });
      if (before.status !== 'ACTIVE' && r.status === 'ACTIVE') {
        priceEvents.push({ listing_id: r.id, recorded_at: at, date, price: r.price, event: 'LISTED', pct_change: pctChange });
      } else if (oldPrice !== r.price) {
        priceChanges++;
        priceEvents.push({
          listing_id: r.id,
          recorded_at: at,
          date,
          price: r.price,
          event: r.price > oldPrice ? 'PRICE_INCREASE' : 'PRICE_DECREASE',
          pct_change: pctChange,
        });
      }
    }
    return { priceEvents, changeEvents, inserted, updated, priceChanges };
  },

  delisted(rows: (SummaryRow & { area_id: number | null; kind: string })[], at: string) {
    return {
      priceEvents: rows.map((r) => ({
        listing_id: r.id,
        recorded_at: at,
        date: at.slice(0, 10),
        price: Number(r.price),
        event: 'DELISTED',
        pct_change: null,
      })),
      changeEvents: rows.map((r) => ({
        type: 'listing.status_changed',
        listing_id: r.id,
        kind: r.kind,
        area_id: r.area_id,
        price: Number(r.price),
        bedrooms: r.bedroom_count,
        occurred_at: at,
        data: JSON.stringify({
          listing: rowToSummary({ ...r, status: 'OFF_MARKET' }, new Date(at)),
          oldPrice: Number(r.price),
          newPrice: Number(r.price),
          pctChange: null,
          fromStatus: 'ACTIVE',
          toStatus: 'OFF_MARKET',
        }),
      })),
    };
  },
};
