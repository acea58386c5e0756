import type { Kysely } from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import type { Database } from '../store/schema.js';
import { keysetPages } from '../lib/keyset-pages.js';
import type { ComparablePool } from './comparable-pool.js';
import { PoolBuilder } from './pool-builder.js';

/** Rows read a query when the pool is read from the store (as few as the search index's build reads, for the same reason). */
const CHUNK_ROWS = 5_000;

/**
 * The active listings of `kind` as estimates read them (a property's facts, its borough, its stored price position), in
 * keyset pages of at most `rows` by id ({@link keysetPages}): the pool's read and the valuation's.
 */
export function activeListingChunks(db: Kysely<Database>, kind: ListingKind, rows = CHUNK_ROWS) {
  const page = (after: string, size: number) =>
    db
      .selectFrom('listings')
      .select([
        'id',
        'kind',
        'borough_id',
        'latitude',
        'longitude',
        'price',
        'bedroom_count',
        'full_bathroom_count',
        'half_bathroom_count',
        'sqft',
        'building_type',
        'price_position',
      ])
      .where('status', '=', 'ACTIVE')
      .where('kind', '=', kind)
      .where('id', '>', after)
      .orderBy('id')
      .limit(size)
      .execute();
  return keysetPages('', page, (row) => row.id, rows);
}

/** Reads the active listings of `kind` the pool is made of ({@link activeListingChunks}) into the pool of their properties. */
export async function readPool(db: Kysely<Database>, kind: ListingKind): Promise<ComparablePool> {
  const builder = new PoolBuilder();
  for await (const chunk of activeListingChunks(db, kind)) builder.add(chunk);
  return builder.finish(kind);
}
