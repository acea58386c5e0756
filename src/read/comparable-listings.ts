import type { Kysely } from 'kysely';
import { COMPARABLE_RADII, similarity } from '../domain/comparables.js';
import type { ListingKind } from '../domain/listing.js';
import { rowToSummary } from '../presenters/listing.js';
import { listingsNear } from '../search/query.js';
import type { ListingRow } from '../store/listing-rows.js';
import type { Database } from '../store/schema.js';

/**
 * Active listings of the subject's kind near it (distances in metres), most similar first ({@link similarity}): the
 * radius widens through {@link COMPARABLE_RADII} until `limit` are found. None when its position is unknown.
 */
export async function comparableListings(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  subject: ListingRow,
  limit: number,
  now: Date,
) {
  const id = subject.id;
  if (subject.latitude === null || subject.longitude === null) return { items: [], radius: null };
  const facts = {
    price: Number(subject.price),
    bedroomCount: subject.bedroom_count,
    fullBathroomCount: subject.full_bathroom_count,
    sqft: subject.sqft,
  };
  let radius: number = COMPARABLE_RADII[0];
  let candidates: Awaited<ReturnType<typeof listingsNear>> = [];
  for (radius of COMPARABLE_RADII) {
    candidates = await listingsNear(
      db,
      subject.kind as ListingKind,
      { latitude: subject.latitude, longitude: subject.longitude, radius },
      id,
      dialect,
    );
    if (candidates.length >= limit) break;
  }
  const items = candidates
    .map((c) => ({
      listing: rowToSummary({ ...c, distance: undefined }, now),
      distance: Number(c.distance),
      similarity: similarity(
        facts,
        { price: Number(c.price), bedroomCount: c.bedroom_count, fullBathroomCount: c.full_bathroom_count, sqft: c.sqft },
        Number(c.distance),
        radius,
      ),
    }))
    .sort((a, b) => b.similarity - a.similarity || a.distance - b.distance || (a.listing.id < b.listing.id ? -1 : 1))
    .slice(0, limit);
  return { items, radius };
}
