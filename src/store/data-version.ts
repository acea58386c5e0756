import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * Counts a write transaction that changed listings in `data_versions` (migration 011), so that every
 * instance can tell that listings changed by reading one row. A transaction that writes listings' rows takes the
 * version's lock first ({@link nextDataVersion}) and stamps its rows with the version this moves to; one that does
 * not runs this last, so that the row lock it takes is held only for the commit.
 */
export async function bumpDataVersion(trx: Transaction<Database>): Promise<void> {
  await dataVersionBump(trx).execute();
}

/** The counters of `data_versions`: the listings' (migration 011), their bulk writes' (031), the area list's (035). */
export type DataVersionName = 'listings' | 'listings_bulk' | 'areas';

/** The statement that moves the counter `name` by one, on `db`. */
export function versionBump(db: Kysely<Database>, name: DataVersionName) {
  return db
    .updateTable('data_versions')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('name', '=', name);
}

/** The statement {@link bumpDataVersion} runs, on `db`: also compiled to run on a connection outside Kysely (the seed's COPY). */
export function dataVersionBump(db: Kysely<Database>) {
  return versionBump(db, 'listings');
}

/**
 * The statement that moves `listings_bulk` (migration 031), run with {@link bumpDataVersion} by a write whose rows carry
 * no version of their own (the synthetic listings' load and removal): an index that sees it move reads every listing again.
 */
export function bulkVersionBump(db: Kysely<Database>) {
  return versionBump(db, 'listings_bulk');
}

/**
 * Opens a write of listings' rows in `trx`, before any other write to them: takes the data version's lock (PostgreSQL:
 * its row; SQLite: the database's write lock), by a write that changes nothing, and returns the version
 * this transaction's {@link bumpDataVersion} will move to, which every row it writes carries as `data_version`.
 * Holding the lock from the first write to the commit makes versions commit in their order, so that a reader that
 * saw version V finds every row written after it as `data_version > V`. Writers that take it first never wait on
 * each other's rows while holding it.
 */
export async function nextDataVersion(trx: Transaction<Database>): Promise<number> {
  // A write that changes nothing takes the lock on both databases (PostgreSQL's row lock, SQLite's write lock) and reads the version under it.
  const { version } = await trx
    .updateTable('data_versions')
    .set((eb) => ({ version: eb.ref('version') }))
    .where('name', '=', 'listings')
    .returning('version')
    .executeTakeFirstOrThrow();
  return Number(version) + 1;
}
