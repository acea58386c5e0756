import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/**
 * Listings joined to when a crawl last saw each (`listing_sightings`, migration 033; a listing no crawl saw, a synthetic
 * one, has no sighting): the one place the join is written. Select from it what the caller needs.
 */
export function listingsWithSightings(db: Kysely<Database>) {
  return db.selectFrom('listings').leftJoin('listing_sightings', 'listing_sightings.listing_id', 'listings.id');
}

/** Whole listing rows with `last_seen_at` ({@link SeenListingRow}). */
export function seenListings(db: Kysely<Database>) {
  return listingsWithSightings(db).selectAll('listings').select('listing_sightings.last_seen_at');
}

/** The order of "the newest seen" among listings sharing a building or a path: when last seen, else when first seen (UTC). */
export const NEWEST_SEEN = sql`coalesce(listing_sightings.last_seen_at, listings.first_seen_at)`;
