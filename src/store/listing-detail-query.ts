import { type CompiledQuery, type Kysely, PostgresAdapter } from 'kysely';
import { jsonArrayFrom as pgJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import type { PriceEvent } from '../wire/listing.js';
import type { SeenListingRow } from './listing-rows.js';
import type { Database } from './schema.js';
import { seenListings } from './seen-listings.js';

/** A stored listing as its detail needs it: the row, its amenities by name (sorted), its price events (oldest first). */
export interface StoredDetail {
  row: SeenListingRow;
  amenities: string[];
  history: PriceEvent[];
}

/** A row of the detail query: the listing's columns, and its amenities and price events aggregated as JSON. */
export type DetailRow = SeenListingRow & { amenity_rows: unknown; history_rows: unknown };

/**
 * The detail query, compiled with a placeholder id: its one parameter is the listing id. JSON aggregates of the
 * listing's amenities and price events ride on its row.
 * @throws Error when the compiled statement does not have exactly one parameter.
 */
export function detailQuery(db: Kysely<Database>): CompiledQuery {
  const jsonArrayFrom = db.getExecutor().adapter instanceof PostgresAdapter ? pgJsonArrayFrom : sqliteJsonArrayFrom;
  const compiled = seenListings(db)
    .select((eb) => [
      jsonArrayFrom(eb.selectFrom('listing_amenities').select('amenity').whereRef('listing_id', '=', 'listings.id').orderBy('amenity')).as(
        'amenity_rows',
      ),
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

/** A row of the detail query as a stored detail. */
export function storedDetail(found: DetailRow): StoredDetail {
  // The row is answered as read, its two aggregate columns left on it: a rest copy of a row this wide
  // (better-sqlite3 makes it a dictionary-mode object) is a noticeable share of a detail's CPU.
  const { amenity_rows, history_rows } = found;
  const row: SeenListingRow = found;
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
