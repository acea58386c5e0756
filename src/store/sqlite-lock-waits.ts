import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';

/** How long a writer waits for another connection's write lock before it gives up ("database is locked"), milliseconds. */
export const LOCK_WAIT_MS = 5000;

/** Milliseconds between two tries for the lock: growing from the first to the last, so a short hold is seen soon. */
const RETRY_DELAYS_MS = [1, 2, 4, 8, 16];

/**
 * Kysely's SQLite dialect for a writer's connection whose busy timeout is 0: a statement refused because another
 * connection holds the write lock (SQLITE_BUSY: another process, or a thread of this one) is tried again after a timer,
 * for up to `lockWaitMs`, so the event loop goes on meanwhile. SQLite's own busy handler waits by sleeping in the
 * calling thread: a `begin immediate` behind another writer's transaction of a few seconds held every request for as
 * long (docs/benchmark-history.md, the soak of an API process beside a worker).
 *
 * What is tried again: `begin` (the store's transactions begin immediate, so that the lock is taken there or not at
 * all), `commit`, and any statement outside a transaction; each refused with SQLITE_BUSY changed nothing. A statement
 * inside a transaction runs once: the transaction already holds the lock.
 */
export class LockWaitingSqliteDialect extends SqliteDialect {
  constructor(
    private readonly settings: SqliteDialectConfig,
    private readonly lockWaitMs = LOCK_WAIT_MS,
  ) {
    super(settings);
  }

  override createDriver(): Driver {
    return new LockWaitingSqliteDriver(this.settings, this.lockWaitMs);
  }
}

/** Kysely's SQLite driver, with the lock waited for as {@link LockWaitingSqliteDialect} says. */
class LockWaitingSqliteDriver extends SqliteDriver {
  /** Whether the one connection is inside a transaction (SQLite has one connection, taken under Kysely's mutex). */
  private inTransaction = false;
  private connection: DatabaseConnection | undefined;

  constructor(
    config: SqliteDialectConfig,
    private readonly lockWaitMs: number,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    this.connection ??= {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> =>
        this.inTransaction ? inner.executeQuery<R>(query) : waitingForLock(() => inner.executeQuery<R>(query), this.lockWaitMs),
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => inner.streamQuery<R>(query, chunkSize),
    };
    return this.connection;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await super.beginTransaction(connection);
    this.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A refused commit leaves the transaction open, and is tried again; one that failed otherwise is rolled back.
    this.inTransaction = false;
    await super.commitTransaction(connection);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.inTransaction = false;
    await super.rollbackTransaction(connection);
  }
}

/**
 * Runs `statement` until it is not refused for another connection's lock (SQLITE_BUSY), waiting on timers between
 * tries; after `lockWaitMs` the refusal is thrown as SQLite gave it.
 */
async function waitingForLock<T>(statement: () => Promise<T>, lockWaitMs: number): Promise<T> {
  const deadline = performance.now() + lockWaitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || performance.now() >= deadline) throw error;
      await sleep(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]);
    }
  }
}
