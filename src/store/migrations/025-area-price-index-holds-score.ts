import { sql, type Kysely } from 'kysely';

/**
 * The area and price index (migration 008) also holds the recommended score, so that the price ladders,
 * which read every active listing's price through it, count each area's listings by score from the index
 * alone (`PriceLadders`): the planner's estimate of where an area's matches sit in the default order.
 * The key columns in front are unchanged, so the index serves the same counts as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await rebuild(db, ['recommended_score']);
}

export async function down(db: Kysely<any>): Promise<void> {
  await rebuild(db, []);
}

async function rebuild(db: Kysely<any>, more: string[]): Promise<void> {
  await db.schema.dropIndex('listings_area_price_beds').execute();
  await db.schema
    .createIndex('listings_area_price_beds')
    .on('listings')
    .columns(['kind', 'status', 'area_id', 'price', 'bedroom_count', ...more])
    .execute();
  // New indexes have no statistics until analyzed (migration 014 says why).
  await sql`analyze listings`.execute(db);
}
