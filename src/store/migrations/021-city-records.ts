import type { Kysely } from 'kysely';

/**
 * NYC Open Data's records (issue 30): recorded sales (DOF rolling sales) and tax lots (PLUTO), mirrored
 * from SODA, with their indexes for the recorded sales' filters and sorts, tax-lot matching by BBL, by
 * block and by address.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('recorded_sales')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('borough_id', 'integer', (c) => c.notNull())
    .addColumn('bbl', 'text')
    .addColumn('block', 'integer')
    .addColumn('lot', 'integer')
    .addColumn('neighborhood', 'text')
    .addColumn('building_class_category', 'text')
    .addColumn('building_class', 'text')
    .addColumn('tax_class', 'text')
    .addColumn('address', 'text')
    .addColumn('apartment_number', 'text')
    .addColumn('zip_code', 'text')
    .addColumn('residential_units', 'integer')
    .addColumn('commercial_units', 'integer')
    .addColumn('total_units', 'integer')
    .addColumn('land_square_feet', 'bigint')
    .addColumn('gross_square_feet', 'bigint')
    .addColumn('year_built', 'integer')
    .addColumn('sale_price', 'bigint')
    .addColumn('sale_date', 'text', (c) => c.notNull())
    .addColumn('price_per_sqft', 'double precision')
    .addColumn('no_consideration', 'integer', (c) => c.notNull())
    .addColumn('latitude', 'double precision')
    .addColumn('longitude', 'double precision')
    .addColumn('position_source', 'text')
    .addColumn('area_id', 'integer')
    .addColumn('building_id', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('recorded_sales_date').on('recorded_sales').columns(['sale_date', 'id']).execute();
  await db.schema.createIndex('recorded_sales_borough_date').on('recorded_sales').columns(['borough_id', 'sale_date']).execute();
  await db.schema.createIndex('recorded_sales_area_date').on('recorded_sales').columns(['area_id', 'sale_date']).execute();
  await db.schema.createIndex('recorded_sales_bbl').on('recorded_sales').column('bbl').execute();
  await db.schema.createIndex('recorded_sales_building').on('recorded_sales').column('building_id').execute();
  await db.schema.createIndex('recorded_sales_updated').on('recorded_sales').column('updated_at').execute();
  await db.schema
    .createTable('tax_lots')
    .addColumn('bbl', 'text', (c) => c.primaryKey())
    .addColumn('borough_id', 'integer', (c) => c.notNull())
    .addColumn('block', 'integer', (c) => c.notNull())
    .addColumn('lot', 'integer', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('address_key', 'text')
    .addColumn('zip_code', 'text')
    .addColumn('community_district', 'integer')
    .addColumn('council_district', 'integer')
    .addColumn('police_precinct', 'integer')
    .addColumn('building_class', 'text')
    .addColumn('land_use', 'text')
    .addColumn('floor_count', 'integer')
    .addColumn('residential_units', 'integer')
    .addColumn('total_units', 'integer')
    .addColumn('year_built', 'integer')
    .addColumn('historic_district', 'text')
    .addColumn('landmark', 'text')
    .addColumn('latitude', 'double precision')
    .addColumn('longitude', 'double precision')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tax_lots_address').on('tax_lots').columns(['address_key', 'zip_code']).execute();
  await db.schema.createIndex('tax_lots_block').on('tax_lots').columns(['borough_id', 'block']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('recorded_sales').execute();
  await db.schema.dropTable('tax_lots').execute();
}
