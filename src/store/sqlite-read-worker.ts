/**
 * The worker of {@link SqliteReadThread} (sqlite-read-thread.ts), run on its own thread: one connection to the
 * mirror's file that may only read (`query_only`), its prepared statements kept by query text (at most
 * {@link MAX_STATEMENTS}, the oldest go) with their column names, answering each {@link ReadQuery} message with a
 * {@link ReadAnswer}: the column names and the raw rows (arrays of column values), or the error's message and code.
 * Messages sent before the listener is attached wait in the port.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database, { type Statement } from 'better-sqlite3';

/** A statement to run, as the main thread sends it. */
export interface ReadQuery {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

/** What the worker answers: the rows of the statement, or why it failed (SQLite's message and code). */
export type ReadAnswer = { id: number; columns: string[]; rows: unknown[][] } | { id: number; error: string; code?: string };

/** What the main thread starts the worker with: the mirror's SQLite file. */
export interface ReadWorkerData {
  file: string;
}

const MAX_STATEMENTS = 1000;

if (parentPort) {
  const port = parentPort;
  const db = new Database((workerData as ReadWorkerData).file, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('query_only = 1');
  const statements = new Map<string, { statement: Statement<unknown[], unknown[]>; columns: string[] }>();
  port.on('message', ({ id, sql, parameters }: ReadQuery) => {
    try {
      let prepared = statements.get(sql);
      if (!prepared) {
        const statement = db.prepare<unknown[], unknown[]>(sql);
        if (!statement.reader) throw new Error('the read thread runs statements that return rows only');
        statement.raw(true);
        prepared = { statement, columns: statement.columns().map((c) => c.name) };
        if (statements.size >= MAX_STATEMENTS) statements.delete(statements.keys().next().value!);
        statements.set(sql, prepared);
      }
      const rows = prepared.statement.all(parameters) as unknown[][];
      // SQLite prepares a statement again by itself when the schema changes: a row of another width has other columns.
      if (rows.length && rows[0].length !== prepared.columns.length) prepared.columns = prepared.statement.columns().map((c) => c.name);
      port.postMessage({ id, columns: prepared.columns, rows } satisfies ReadAnswer);
    } catch (e) {
      const error = e as Error & { code?: string };
      port.postMessage({ id, error: String(error?.message), code: error?.code } satisfies ReadAnswer);
    }
  });
}
