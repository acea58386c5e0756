import type { Kysely } from 'kysely';

/**
 * Migration 002 indexed `listings.building_id` a second time (`listings_building`, beside 001's
 * `listings_building_id`): the same column in the same order. Every write paid for both and the
 * seed rebuilt both; the planner only ever needs one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('listings_building').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('listings_building').on('listings').column('building_id').execute();
}
