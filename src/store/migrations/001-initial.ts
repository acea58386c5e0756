import type { Kysely } from 'kysely';

/** Initial schema: areas, listings (+ amenities, price history), buildings, sync scopes, keys, quotas. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('areas')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('parent_id', 'integer')
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('borough_id', 'integer', (c) => c.notNull())
    .execute();

  let listings = db.schema
    .createTable('listings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('area_id', 'integer')
    .addColumn('borough_id', 'integer');
  for (const name of ['area_name', 'street', 'unit', 'city', 'state', 'zip_code']) listings = listings.addColumn(name, 'text');
  listings = listings
    .addColumn('price', 'bigint', (c) => c.notNull())
    .addColumn('bedroom_count', 'integer')
    .addColumn('full_bathroom_count', 'integer')
    .addColumn('half_bathroom_count', 'integer')
    .addColumn('building_type', 'text')
    .addColumn('latitude', 'double precision')
    .addColumn('longitude', 'double precision');
  for (const name of ['lead_photo_key', 'source_group_label', 'url_path', 'tier', 'listed_at']) listings = listings.addColumn(name, 'text');
  for (const name of ['net_effective', 'months_free', 'sqft', 'price_per_sqft', 'rooms', 'lease_term']) {
    listings = listings.addColumn(name, 'double precision');
  }
  listings = listings
    .addColumn('furnished', 'integer')
    .addColumn('available_at', 'text')
    .addColumn('sale_type', 'text')
    .addColumn('no_fee', 'integer')
    .addColumn('pets_allowed', 'integer')
    .addColumn('has_3d_tour', 'integer')
    .addColumn('has_video', 'integer')
    .addColumn('open_house_start', 'text')
    .addColumn('open_house_end', 'text')
    .addColumn('monthly_taxes', 'double precision')
    .addColumn('monthly_maintenance', 'double precision')
    .addColumn('monthly_common_charges', 'double precision')
    .addColumn('monthly_charges', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('year_built', 'integer')
    .addColumn('building_id', 'text')
    .addColumn('building_slug', 'text')
    .addColumn('transit_score', 'integer')
    .addColumn('recommended_score', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('detail_fetched_at', 'text')
    .addColumn('delisted_at', 'text');
  await listings.execute();

  // One index per filter or sort, each led by the two columns every search fixes.
  const indexed: [string, string[]][] = [
    ['listings_price', ['price', 'id']],
    ['listings_listed_at', ['listed_at', 'id']],
    ['listings_ppsf', ['price_per_sqft', 'id']],
    ['listings_recommended', ['recommended_score', 'listed_at', 'id']],
    ['listings_area', ['area_id']],
    ['listings_beds', ['bedroom_count']],
    ['listings_baths', ['full_bathroom_count']],
    ['listings_sqft', ['sqft']],
    ['listings_building_type', ['building_type']],
    ['listings_year_built', ['year_built']],
    ['listings_sale_type', ['sale_type']],
    ['listings_transit', ['transit_score']],
    ['listings_available', ['available_at']],
  ];
  for (const [name, columns] of indexed) {
    await db.schema
      .createIndex(name)
      .on('listings')
      .columns(['kind', 'status', ...columns])
      .execute();
  }
  await db.schema.createIndex('listings_url_path').on('listings').column('url_path').execute();
  await db.schema.createIndex('listings_building_id').on('listings').column('building_id').execute();
  await db.schema.createIndex('listings_building_slug').on('listings').column('building_slug').execute();

  await db.schema
    .createTable('listing_amenities')
    .addColumn('listing_id', 'text', (c) => c.notNull())
    .addColumn('amenity', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('listing_amenities_pk', ['listing_id', 'amenity'])
    .execute();
  await db.schema.createIndex('listing_amenities_amenity').on('listing_amenities').columns(['amenity', 'listing_id']).execute();

  await db.schema
    .createTable('price_history')
    .addColumn('listing_id', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('price', 'bigint', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('pct_change', 'double precision')
    .addPrimaryKeyConstraint('price_history_pk', ['listing_id', 'recorded_at', 'event'])
    .execute();

  await db.schema
    .createTable('buildings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sync_scopes')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('last_success_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'text')
    .addColumn('listing_count', 'integer')
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('prefix_hint', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('label', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();

  await db.schema
    .createTable('quota_usage')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('quota_usage_pk', ['subject', 'month'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['quota_usage', 'api_keys', 'sync_scopes', 'buildings', 'price_history', 'listing_amenities', 'listings', 'areas']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
