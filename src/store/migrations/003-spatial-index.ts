import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * A real spatial index on listing positions. SQLite: an R*Tree virtual table keyed by the listing's
 * rowid, kept in step by triggers (R*Tree stores 32-bit floats, so it serves as a prefilter; the exact
 * test runs on the listing's own columns). PostgreSQL: a GiST index on `point(longitude, latitude)`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`create index listings_position on listings using gist (point(longitude, latitude))`.execute(db);
    return;
  }
  await sql`create virtual table listings_rtree using rtree(id, min_lat, max_lat, min_lon, max_lon)`.execute(db);
  await sql`insert into listings_rtree select rowid, latitude, latitude, longitude, longitude from listings where latitude is not null and longitude is not null`.execute(
    db,
  );
  await sql`create trigger listings_rtree_insert after insert on listings when new.latitude is not null and new.longitude is not null
    begin insert into listings_rtree values (new.rowid, new.latitude, new.latitude, new.longitude, new.longitude); end`.execute(db);
  await sql`create trigger listings_rtree_update after update of latitude, longitude on listings
    begin
      delete from listings_rtree where id = old.rowid;
      insert into listings_rtree select new.rowid, new.latitude, new.latitude, new.longitude, new.longitude where new.latitude is not null and new.longitude is not null;
    end`.execute(db);
  await sql`create trigger listings_rtree_delete after delete on listings begin delete from listings_rtree where id = old.rowid; end`.execute(
    db,
  );
}
