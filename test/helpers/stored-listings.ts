import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.js';

/**
 * Everything stored about listings that a failed write must leave as it was: each listing's id, status, price and
 * last sighting (as one JSON text, so that a change anywhere shows), their count, and the price events and amenity
 * rows counted. Tests of faults take it before and after.
 */
export async function storedListings(db: Kysely<Database>) {
  const rows = await db
    .selectFrom('listings')
    .leftJoin('listing_sightings', 'listing_sightings.listing_id', 'listings.id')
    .select(['id', 'status', 'price', 'last_seen_at'])
    .orderBy('id')
    .execute();
  const count = (table: 'price_history' | 'listing_amenities') =>
    db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  return {
    rows: JSON.stringify(rows),
    count: rows.length,
    events: await count('price_history'),
    amenities: await count('listing_amenities'),
  };
}

/** How many rows crawls left staged (`crawl_staging`): none once a crawl has failed or been written. */
export async function stagedRows(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('crawl_staging')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
