import type { Kysely } from 'kysely';

/**
 * A listing's price position: how far its asking price is from the estimate of what it is worth, in percent
 * (`-5`: 5 % under), rounded to a tenth as the listing's detail shows it. Written by the valuation that follows
 * each sync (estimate/valuation.ts); null until valued, or when the listing has no estimate. Searches filter on it
 * (`maxPricePosition`) among their other conditions, so it has no index of its own.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('listings').addColumn('price_position', 'double precision').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('listings').dropColumn('price_position').execute();
}
