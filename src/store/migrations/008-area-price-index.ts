import type { Kysely } from 'kysely';

/**
 * The commonest search (an area, a price range, bedrooms) answered from one index, count included:
 * at a million listings, a count that must visit each row of a price range costs hundreds of
 * milliseconds; read from this index alone it costs a few.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('listings_area_price_beds')
    .ifNotExists()
    .on('listings')
    .columns(['kind', 'status', 'area_id', 'price', 'bedroom_count'])
    .execute();
}
