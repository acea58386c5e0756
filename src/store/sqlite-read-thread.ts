import { Worker } from 'node:worker_threads';
import {
  type CompiledQuery,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Database } from './schema.js';
import { rowBuilder, type RowBuilder } from './sqlite-statements.js';
import type { ReadAnswer, ReadQuery, ReadWorkerData } from './sqlite-read-worker.js';

/**
 * The worker: its module compiled beside this file, as `npm start` runs it. When this file runs from its TypeScript
 * source (the tests, `tsx`), the worker starts by registering tsx's loader and then imports the source.
 */
function startWorker(workerData: ReadWorkerData): Worker {
  // No inherited Node options: a parent started with `--input-type` (a script given with -e) would make the worker's file fail to load.
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./sqlite-read-worker.js', import.meta.url), { workerData, execArgv: [] });
  const source = new URL('./sqlite-read-worker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`, {
    eval: true,
    workerData,
  });
}

/**
 * Seconds a read thread may stay idle before it is stopped; the next read starts it again (a worker and a connection
 * opened). With the search index current, a mirror of a million listings reads on these threads only to build the index
 * and the estimates' comparables, and for market figures: idle workers held their heaps between those reads for nothing
 * (docs/benchmark-history.md has the measure).
 */
export const READ_THREAD_IDLE_SECONDS = 30;

interface Pending {
  resolve: (rows: Record<string, unknown>[]) => void;
  reject: (error: Error) => void;
}

/**
 * A connection of its own to a SQLite mirror, on a worker thread: the queries it is given run there, so
 * that the event loop answers other requests meanwhile. better-sqlite3 runs a query on the calling
 * thread, and a search that visits many rows held the event loop for all of it (a city-wide search for
 * rentals with a fee, at a million listings). Reads only (`query_only`); in WAL mode it
 * sees every write the main connection has committed, so a read after a write finds it. Queries run
 * one at a time, in the order given. A worker that dies fails the queries in flight (with its error)
 * and is started again for the next one. A worker idle for `idleSeconds` is stopped, and started again by the next query.
 */
export class SqliteReadThread {
  private worker: Worker | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closed = false;
  /** Row builders by the column names they build (joined by NUL). */
  private readonly builders = new Map<string, RowBuilder>();

  constructor(
    private readonly file: string,
    /** ROW_BUILDERS: rows made objects by a generated literal ({@link rowBuilder}). */
    private readonly rowBuilders = true,
    private readonly idleSeconds = READ_THREAD_IDLE_SECONDS,
  ) {}

  /** Whether a worker is running (started by a query, stopped when idle or closed). */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Queries given and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** The rows of one statement (objects keyed by column name, in select order). @throws Error from SQLite (message and `code`), or when closed. */
  all(sql: string, parameters: readonly unknown[]): Promise<Record<string, unknown>[]> {
    if (this.closed) return Promise.reject(new Error('the SQLite read thread is closed'));
    const id = this.nextId++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    return new Promise((resolve, reject) => {
      const worker = this.started();
      // Held while it has queries to answer (a command awaiting one must not exit); idle, it keeps nothing alive.
      if (!this.pending.size) worker.ref();
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, sql, parameters } satisfies ReadQuery);
    });
  }

  /** Stops the worker; queries in flight fail. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.failAll(new Error('the SQLite read thread was closed'));
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker({ file: this.file });
    worker.unref();
    worker.on('message', (answer: ReadAnswer) => this.settle(answer));
    worker.on('error', (error) => this.lost(worker, error));
    worker.on('exit', (code) => this.lost(worker, new Error(`the SQLite read thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private settle(answer: ReadAnswer): void {
    const waiting = this.pending.get(answer.id);
    if (!waiting) return;
    this.pending.delete(answer.id);
    if (!this.pending.size) {
      this.worker?.unref();
      this.stopWhenIdle();
    }
    if ('error' in answer) {
      waiting.reject(Object.assign(new Error(answer.error), { code: answer.code }));
      return;
    }
    const { columns, rows } = answer;
    const key = columns.join('\u0000');
    let build = this.builders.get(key);
    if (!build) {
      build = rowBuilder(columns, this.rowBuilders);
      this.builders.set(key, build);
    }
    const objects = new Array<Record<string, unknown>>(rows.length);
    for (let i = 0; i < rows.length; i++) objects[i] = build(rows[i]);
    waiting.resolve(objects);
  }

  /** Stops the worker once it has had no query for `idleSeconds` (a query given meanwhile clears the timer). */
  private stopWhenIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      const worker = this.worker;
      if (!worker || this.pending.size) return;
      // Forgotten first, so that its exit is not taken for a death, and the next query starts another.
      this.worker = null;
      void worker.terminate();
    }, this.idleSeconds * 1000);
    this.idleTimer.unref();
  }

  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.failAll(error);
  }

  private failAll(error: Error): void {
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

/**
 * Read threads a mirror's reads are shared among. Two, so that a long search (tens of milliseconds at a
 * million listings) does not hold every other read behind it; figures in docs/benchmark-history.md.
 */
const READ_THREADS = 2;

/**
 * Kysely's driver over {@link SqliteReadThread}s: each query goes to the thread with the fewest queries in
 * flight (the first of them on a tie); no transactions (reads only).
 */
class ReadThreadDriver implements Driver {
  private readonly connection: DatabaseConnection;

  constructor(private readonly threads: SqliteReadThread[]) {
    const leastBusy = () => threads.reduce((best, thread) => (thread.inFlight < best.inFlight ? thread : best));
    this.connection = {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => ({
        rows: (await leastBusy().all(query.sql, query.parameters)) as R[],
      }),
      streamQuery: () => {
        throw new Error('the SQLite read thread does not stream');
      },
    };
  }

  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error('the SQLite read thread runs no transactions');
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}

/**
 * A Kysely handle whose queries run on {@link READ_THREADS} {@link SqliteReadThread}s over `file` (SQLite's SQL, as the main
 * handle writes it). For reads only: a statement that returns no rows fails. Destroying it stops the threads.
 */
export function readThreadDatabase(file: string, rowBuilders = true, idleSeconds = READ_THREAD_IDLE_SECONDS): Kysely<Database> {
  const pool = Array.from({ length: READ_THREADS }, () => new SqliteReadThread(file, rowBuilders, idleSeconds));
  const dialect: Dialect = {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ReadThreadDriver(pool),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
  return new Kysely<Database>({ dialect });
}
