import type { Kysely } from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import type { Database } from '../store/schema.js';
import { keysetPages } from '../lib/keyset-pages.js';
import { runGivingTurns } from '../lib/stepwise.js';
import type { ComparablePool } from './comparable-pool.js';
import { PoolBuilder } from './pool-builder.js';

/**
 * The active listings of `kind` as estimates read them (a property's facts, its borough, its stored price position), in
 * keyset pages by id ({@link keysetPages}): the pool's read and the valuation's.
 */
export function activeListingChunks(db: Kysely<Database>, kind: ListingKind) {
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
  return keysetPages('', page, (row) => row.id);
}

/**
 * Reads the active listings of `kind` the pool is made of ({@link activeListingChunks}) into the pool of their properties,
 * the event loop given turns between the reads' pages and between the pool's steps.
 */
export async function readPool(db: Kysely<Database>, kind: ListingKind): Promise<ComparablePool> {
  const builder = new PoolBuilder();
  for await (const chunk of activeListingChunks(db, kind)) builder.add(chunk);
  return runGivingTurns(builder.finishing(kind));
}
