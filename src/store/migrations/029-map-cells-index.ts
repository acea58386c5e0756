import type { Kysely } from 'kysely';

/**
 * A covering index for a map's clusters (`/v1/search/{kind}/clusters`): a kind's active listings by longitude, with
 * the latitude, price and bedrooms beside it. A box's cells are counted from the index alone when the search's other
 * filters are on price and bedrooms, the explorer's commonest; reading the table's rows (with their details) for the
 * whole city took several times as long (docs/benchmark-history.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('listings_map_cells')
    .on('listings')
    .columns(['kind', 'status', 'longitude', 'latitude', 'price', 'bedroom_count'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_map_cells').execute();
}
