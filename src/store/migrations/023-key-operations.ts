import type { Kysely } from 'kysely';

/**
 * Keys limited to some operations (issue 31): `operations` holds the OpenAPI operation ids a key may call,
 * comma-separated (a map page's key needs a handful of reads); null for a key that may call every operation its plan allows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('operations', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('operations').execute();
}
