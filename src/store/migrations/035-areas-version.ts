import type { Kysely } from 'kysely';

/**
 * The area list's counter in `data_versions` (migration 011), moved by the transaction that replaces the list: an
 * instance keeps its area tree while the counter stands still, and reads one row, not the whole list with its
 * outlines, to learn whether another instance replaced it (src/store/areas-repository.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.insertInto('data_versions').values({ name: 'areas', version: 0 }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('data_versions').where('name', '=', 'areas').execute();
}
