import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * Counts a write transaction that changed listings in `data_versions` (migration 011), so that every
 * instance can tell that listings changed by reading one row. Run last in the transaction: the row lock it takes is
 * then held only for the commit, and no two writers can wait on each other through it.
 */
export async function bumpDataVersion(trx: Transaction<Database>): Promise<void> {
  await dataVersionBump(trx).execute();
}

/** The statement {@link bumpDataVersion} runs, on `db`: also compiled to run on a connection outside Kysely (the seed's COPY). */
export function dataVersionBump(db: Kysely<Database>) {
  return db
    .updateTable('data_versions')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('name', '=', 'listings');
}
