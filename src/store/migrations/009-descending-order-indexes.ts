import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL only: indexes in the order of the descending sorts whose nullable key sorts unknown values last
 * (`listed_at desc nulls last`, `price_per_sqft desc nulls last`). Read backwards, an ascending index
 * puts nulls first, so without these PostgreSQL sorted every match of such a search, even for a keyset
 * page deep into a borough. SQLite already orders nulls as the smallest values,
 * so its ascending indexes read backwards serve these sorts as they are.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create index if not exists listings_recommended_desc on listings (kind, status, recommended_score desc, listed_at desc nulls last, id desc)`.execute(
    db,
  );
  await sql`create index if not exists listings_listed_at_desc on listings (kind, status, listed_at desc nulls last, id desc)`.execute(db);
  await sql`create index if not exists listings_ppsf_desc on listings (kind, status, price_per_sqft desc nulls last, id desc)`.execute(db);
}
