import type { Kysely } from 'kysely';

/**
 * Publishable keys (issue 31): a key with `origins` (a comma-separated list of web origins) is meant to be seen
 * in a web page and is accepted only from those origins; a key without is secret, as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('origins', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('origins').execute();
}
