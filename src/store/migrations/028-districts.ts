import type { Kysely } from 'kysely';

const COLUMNS = ['community_district', 'police_precinct', 'school_district'] as const;

/**
 * The districts holding a listing's or a recorded sale's position (community district, police precinct,
 * school district: `DISTRICT_COLUMNS`), stored when the row is written, for the district filters. Each column
 * has an index led by what a search of it narrows first: a listing search by kind and status, a recorded sales
 * search by the district alone. Rows stored before are given theirs when next written: a listing by the next
 * crawl of its scope (the upsert rewrites a row whose derived values differ), a recorded sale by the next
 * positioning of the sales (after every open data sync and hydration run).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of COLUMNS) {
    await db.schema.alterTable('listings').addColumn(column, 'integer').execute();
    await db.schema.alterTable('recorded_sales').addColumn(column, 'integer').execute();
    await db.schema.createIndex(`listings_${column}`).on('listings').columns(['kind', 'status', column]).execute();
    await db.schema.createIndex(`recorded_sales_${column}`).on('recorded_sales').columns([column, 'sale_date']).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of COLUMNS) {
    await db.schema.dropIndex(`listings_${column}`).execute();
    await db.schema.dropIndex(`recorded_sales_${column}`).execute();
    await db.schema.alterTable('listings').dropColumn(column).execute();
    await db.schema.alterTable('recorded_sales').dropColumn(column).execute();
  }
}
