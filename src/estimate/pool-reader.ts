import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { ListingKind } from '../domain/listing.js';
import type { Database } from '../store/schema.js';
import type { ComparablePool } from './comparable-pool.js';
import { PoolBuilder } from './pool-builder.js';

/** Rows read a query when the pool is read from the store (as few as the search index's build reads, for the same reason). */
const CHUNK_ROWS = 5_000;

/**
 * The active listings of `kind` as estimates read them (a property's facts, its borough, its stored price position), in
 * chunks of at most `rows` by id: the pool's read and the valuation's. The event loop has a turn between chunks.
 */
export async function* activeListingChunks(db: Kysely<Database>, kind: ListingKind, rows = CHUNK_ROWS) {
  for (let after = ''; ; ) {
    const chunk = await db
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
      .limit(rows)
      .execute();
    yield chunk;
    if (chunk.length < rows) return;
    after = chunk[chunk.length - 1].id;
    await nextTurn();
  }
}

/** Reads the active listings of `kind` the pool is made of ({@link activeListingChunks}) into the pool of their properties. */
export async function readPool(db: Kysely<Database>, kind: ListingKind): Promise<ComparablePool> {
  const builder = new PoolBuilder();
  for await (const chunk of activeListingChunks(db, kind)) builder.add(chunk);
  return builder.finish(kind);
}
