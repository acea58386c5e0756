import type Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type CompiledQuery } from 'kysely';

/** A Kysely handle that records each statement it runs (SQL and parameters), in order, in `statements`. */
export interface LoggedDb<DB> {
  db: Kysely<DB>;
  statements: CompiledQuery[];
}

/** A logged handle on an open SQLite database (its own handle: destroying it closes `database`). */
export function sqliteWithLog<DB>(database: Database.Database): LoggedDb<DB> {
  const statements: CompiledQuery[] = [];
  return {
    db: new Kysely<DB>({ dialect: new SqliteDialect({ database }), log: (event) => void statements.push(event.query) }),
    statements,
  };
}

/**
 * A logged handle on PostgreSQL whose connections come from `connect`: a pool's (`() => pool.connect()`),
 * or one client's, so that its statements run inside that client's transaction. Destroying the handle
 * ends nothing it borrowed.
 */
export function postgresWithLog<DB>(connect: () => Promise<{ query: (...args: never[]) => unknown; release: () => void }>): LoggedDb<DB> {
  const statements: CompiledQuery[] = [];
  const pool = { connect, end: async () => undefined };
  return {
    db: new Kysely<DB>({ dialect: new PostgresDialect({ pool: pool as never }), log: (event) => void statements.push(event.query) }),
    statements,
  };
}
