import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import * as initial from './migrations/001-initial.js';
import * as realSite from './migrations/002-mirror-real-site.js';
import * as spatial from './migrations/003-spatial-index.js';
import * as snapshots from './migrations/004-market-snapshots.js';
import * as changes from './migrations/005-change-events.js';
import * as webhooks from './migrations/006-webhooks.js';
import * as synthetic from './migrations/007-synthetic-listings.js';
import * as areaPriceIndex from './migrations/008-area-price-index.js';
import * as descendingIndexes from './migrations/009-descending-order-indexes.js';
import * as oneBuildingIndex from './migrations/010-one-building-index.js';
import * as dataVersions from './migrations/011-data-versions.js';
import * as oneAreaIndex from './migrations/012-one-area-index.js';
import * as areaStatistics from './migrations/013-area-statistics.js';
import * as orderIndexesFilter from './migrations/014-order-indexes-hold-area-and-bedrooms.js';
import * as ppsfIndexSize from './migrations/015-price-per-sqft-index-holds-size.js';
import * as backlogIndex from './migrations/016-hydration-backlog-index.js';
import * as parkedHydrations from './migrations/026-parked-hydrations.js';
import * as webhookDueIndexes from './migrations/027-webhook-due-indexes.js';
import * as districts from './migrations/028-districts.js';
import * as mapCellsIndex from './migrations/029-map-cells-index.js';
import * as pricePositions from './migrations/030-price-positions.js';
import * as listingRowVersions from './migrations/031-listing-row-versions.js';
import * as billing from './migrations/032-billing.js';
import * as listingSightings from './migrations/033-listing-sightings.js';
import * as keysetReadIndexes from './migrations/034-keyset-read-indexes.js';
import * as areasVersion from './migrations/035-areas-version.js';
import * as crawlStaging from './migrations/036-crawl-staging.js';
import * as yesFlagIndexes from './migrations/017-yes-flag-indexes.js';
import * as dateAndSizeOrdersHold from './migrations/018-date-and-size-orders-hold-area-and-bedrooms.js';
import * as defaultOrderHoldsNoFee from './migrations/019-default-order-index-holds-no-fee.js';
import * as priceIndexHoldsCharges from './migrations/020-price-index-holds-monthly-charges.js';
import * as cityRecords from './migrations/021-city-records.js';
import * as publishableKeys from './migrations/022-publishable-keys.js';
import * as keyOperations from './migrations/023-key-operations.js';
import * as orderIndexesHoldPrice from './migrations/024-order-indexes-hold-price.js';
import * as areaPriceIndexHoldsScore from './migrations/025-area-price-index-holds-score.js';
import { namingRepeatedStatements } from './named-statements.js';
import type { Database } from './schema.js';
import { LOCK_WAIT_MS, LockWaitingSqliteDialect } from './sqlite-lock-waits.js';
import { statementCache } from './sqlite-statements.js';
import { type LogRestart, WalCheckpointer } from './wal-checkpoints.js';

export type Dialect = 'sqlite' | 'postgres';

/** An open mirror database: the Kysely handle, which dialect it speaks, and how to close it. */
export interface Store {
  db: Kysely<Database>;
  /**
   * For reads made outside a write, which so never wait behind a write transaction: on a SQLite file, a second,
   * read-only connection (WAL: a reader never waits for the writer, and sees every commit); on PostgreSQL, the pool
   * of `db` with every statement unnamed ({@link namingRepeatedStatements} names `db`'s); on `:memory:`, `db`.
   */
  readDb: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL only: the pool Kysely runs on, for what Kysely cannot say (a bulk `COPY`). */
  pool?: pg.Pool;
  /** On a SQLite file with `walCheckpointSeconds`, the write-ahead log's checkpoints in their thread ({@link WalCheckpointer}); null otherwise. */
  checkpoints: WalCheckpointer | null;
  close: () => Promise<void>;
}

/**
 * Gathers the query planner's table statistics where missing or stale (SQLite's advice for a connection that lives
 * long), run when a SQLite mirror opens: without them the planner may pick a filter's index over a far narrower one.
 */
export const PLANNER_STATISTICS_PRAGMA = 'optimize=0x10002';

const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-mirror-real-site': realSite,
  '003-spatial-index': spatial,
  '004-market-snapshots': snapshots,
  '005-change-events': changes,
  '006-webhooks': webhooks,
  '007-synthetic-listings': synthetic,
  '008-area-price-index': areaPriceIndex,
  '009-descending-order-indexes': descendingIndexes,
  '010-one-building-index': oneBuildingIndex,
  '011-data-versions': dataVersions,
  '012-one-area-index': oneAreaIndex,
  '013-area-statistics': areaStatistics,
  '014-order-indexes-hold-area-and-bedrooms': orderIndexesFilter,
  '015-price-per-sqft-index-holds-size': ppsfIndexSize,
  '016-hydration-backlog-index': backlogIndex,
  '017-yes-flag-indexes': yesFlagIndexes,
  '018-date-and-size-orders-hold-area-and-bedrooms': dateAndSizeOrdersHold,
  '019-default-order-index-holds-no-fee': defaultOrderHoldsNoFee,
  '020-price-index-holds-monthly-charges': priceIndexHoldsCharges,
  '021-city-records': cityRecords,
  '022-publishable-keys': publishableKeys,
  '023-key-operations': keyOperations,
  '024-order-indexes-hold-price': orderIndexesHoldPrice,
  '025-area-price-index-holds-score': areaPriceIndexHoldsScore,
  '026-parked-hydrations': parkedHydrations,
  '027-webhook-due-indexes': webhookDueIndexes,
  '028-districts': districts,
  '029-map-cells-index': mapCellsIndex,
  '030-price-positions': pricePositions,
  '031-listing-row-versions': listingRowVersions,
  '032-billing': billing,
  '033-listing-sightings': listingSightings,
  '034-keyset-read-indexes': keysetReadIndexes,
  '035-areas-version': areasVersion,
  '036-crawl-staging': crawlStaging,
};

class InCodeMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/**
 * Opens the database named by `url`: `postgres://...`/`postgresql://...` for PostgreSQL, otherwise a
 * SQLite file path (`sqlite:` prefix optional; `:memory:` for a throw-away one), in WAL mode. Runs
 * pending migrations before returning. The optimizations, each on by default (docs/performance.md):
 * `rowBuilders` (ROW_BUILDERS), SQLite rows read raw and made objects by a generated literal;
 * `namedStatements` (NAMED_STATEMENTS), PostgreSQL runs a text seen twice as a named prepared statement;
 * `walCheckpointSeconds` (SQLITE_CHECKPOINT_SECONDS, 0: off), a SQLite file's checkpoints in a thread of their own.
 * `onConnectionError` hears of PostgreSQL connections the server dropped; `warn` of background faults (a checkpoint).
 * @throws Error when the database cannot be opened or a migration fails.
 */
export async function openStore(url: string, options: StoreOptions = {}): Promise<Store> {
  const store = /^postgres(ql)?:\/\//.test(url) ? openPostgres(url, options) : openSqlite(url, options);
  await migrate(store);
  return store;
}

/** How {@link openStore} opens a store: its optimizations' switches and whom it tells of faults. */
export interface StoreOptions {
  rowBuilders?: boolean;
  namedStatements?: boolean;
  walCheckpointSeconds?: number;
  /** Pages of log past which the checkpoints' thread starts it over (20,000 unless told: tests make it small). */
  walRestartPages?: number;
  /**
   * SQLite: false when another connection to the file checkpoints it (the background thread's store): this writer's
   * commits then never checkpoint, which would hold its event loop for as long as the copy takes. Default true.
   */
  autocheckpoint?: boolean;
  onConnectionError?: (error: Error) => void;
  warn?: (message: string, cause: string) => void;
}

/** A PostgreSQL store on a pool of 10 connections; its searches run unnamed on the same pool. */
function openPostgres(url: string, options: StoreOptions): Store {
  // int8 (bigint) columns hold prices; they fit a JS number, so read them as numbers.
  pg.types.setTypeParser(20, (v) => Number(v));
  // A connection that cannot be had within 5 s fails the query (a database restarting), rather than waiting.
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
  // A connection the server drops (a restart) emits an error event: on the pool while the connection is idle, on
  // the connection itself while it is checked out (pg-pool removes its own listener then), for instance between
  // two statements of a transaction. Without a listener either would end the process; with one, the query under
  // way fails (a 503 to its request) and the pool opens new connections when asked.
  const dropped = (error: Error) => options.onConnectionError?.(error);
  pool.on('error', dropped);
  pool.on('connect', (client) => client.on('error', dropped));
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: (options.namedStatements ?? true) ? namingRepeatedStatements(pool) : pool }),
  });
  // Searches on the same pool, their statements unnamed: a named search text soon ran on a generic plan,
  // chosen without its prices or areas, that sorted tens of thousands of rentals where a walk of the order
  // reads a few hundred (docs/benchmark-history.md). Ending the pool is `db`'s.
  const readDb = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect: () => pool.connect(), end: async () => undefined } }),
  });
  return {
    db,
    readDb,
    dialect: 'postgres',
    pool,
    checkpoints: null,
    close: async () => {
      await readDb.destroy();
      await db.destroy();
    },
  };
}

/** A SQLite store in WAL mode: the writer's connection, a reader's of its own, and the checkpoints' thread if asked. */
function openSqlite(url: string, options: StoreOptions): Store {
  const file = url.replace(/^sqlite:/, '');
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // A checkpoint every 80 MB of log rather than SQLite's 4 MB: a sync writes the whole city in a few
  // hundred transactions, and checkpointing after most of them doubled what their commits cost.
  sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  sqlite.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  sqlite.pragma(PLANNER_STATISTICS_PRAGMA);
  // From here the writer's statements wait for another connection's lock on timers, not in SQLite's busy handler, which
  // sleeps in this thread ({@link LockWaitingSqliteDialect}).
  sqlite.pragma('busy_timeout = 0');
  const rowBuilders = options.rowBuilders ?? true;
  const db = new Kysely<Database>({
    dialect: new LockWaitingSqliteDialect({ database: statementCache(sqlite, { rowBuilders, immediateTransactions: true }) }),
  });
  // Reads on a connection of their own: none waits behind a write transaction on the writer's (WAL: readers never
  // wait for the writer).
  const readDb =
    file === ':memory:'
      ? db
      : new Kysely<Database>({ dialect: new SqliteDialect({ database: statementCache(readConnection(file), { rowBuilders }) }) });
  const every = options.walCheckpointSeconds ?? 0;
  if (options.autocheckpoint === false) sqlite.pragma('wal_autocheckpoint = 0');
  let checkpoints: WalCheckpointer | null = null;
  if (file !== ':memory:' && every > 0) {
    sqlite.pragma('wal_autocheckpoint = 0');
    checkpoints = new WalCheckpointer(
      file,
      every,
      options.walRestartPages ?? AUTOCHECKPOINT_PAGES,
      () => restartLog(db, sqlite),
      () => sqlite.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`),
      options.warn ?? (() => undefined),
    );
  }
  return {
    db,
    readDb,
    dialect: 'sqlite',
    checkpoints,
    close: async () => {
      await checkpoints?.close();
      await Promise.all([db.destroy(), readDb === db ? undefined : readDb.destroy()]);
    },
  };
}

/**
 * Runs the migrations not yet applied; on a failure closes the store.
 * @throws Error naming the migration that failed.
 */
async function migrate(store: Store): Promise<void> {
  // On PostgreSQL the migration bookkeeping lives in the connection's own schema (search_path), so that
  // several schemas on one server (one per instance or test) never see each other's tables.
  const migrationTableSchema =
    store.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0].s : undefined;
  const { error, results } = await new Migrator({ db: store.db, provider: new InCodeMigrations(), migrationTableSchema }).migrateToLatest();
  if (error) {
    await store.close();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message ?? error}`);
  }
}

/** A second connection to a SQLite file, for reads only: it waits for no write transaction (WAL). */
function readConnection(file: string): SqliteDatabase.Database {
  const reader = new SqliteDatabase(file, { readonly: true });
  reader.pragma('busy_timeout = 5000');
  return reader;
}

/**
 * Starts a SQLite file's write-ahead log over on its writer's connection, between two of its transactions (Kysely's
 * connection is held for it): a TRUNCATE checkpoint, run once the checkpoints' thread has copied every page of the log.
 * It waits at most 50 ms for a reader still in the log (busy 1 then: not now), in SQLite's busy handler: this runs on
 * the event loop.
 */
async function restartLog(db: Kysely<Database>, sqlite: SqliteDatabase.Database): Promise<LogRestart> {
  return db.connection().execute(async () => {
    sqlite.pragma('busy_timeout = 50');
    try {
      return (sqlite.pragma('wal_checkpoint(TRUNCATE)') as LogRestart[])[0];
    } finally {
      sqlite.pragma('busy_timeout = 0');
    }
  });
}

/** Pages of write-ahead log past which it is checkpointed whole and started over: by the writer's connection as it commits, or by the checkpoints' thread. */
const AUTOCHECKPOINT_PAGES = 20_000;

/** PostgreSQL error codes of a server that cannot serve now: shutting down, starting, or refusing connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300']);
/** Node's codes of a connection refused, dropped or timed out. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * Whether `error` says the database cannot be reached now (a restart, a dropped connection, no connection
 * within the pool's timeout), as opposed to a fault of the query: the API answers these 503 with
 * `Retry-After` (docs/decisions.md), and the request may be tried again.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: string }).code;
  if (code && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
  // pg's own words when a connection ends under a query, or none comes within connectionTimeoutMillis; the server's
  // when an operator closed the database to connections (ALTER DATABASE ... ALLOW_CONNECTIONS false).
  return /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|is not currently accepting connections/.test(
    error.message,
  );
}
