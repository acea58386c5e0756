import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
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
import * as yesFlagIndexes from './migrations/017-yes-flag-indexes.js';
import * as dateAndSizeOrdersHold from './migrations/018-date-and-size-orders-hold-area-and-bedrooms.js';
import * as defaultOrderHoldsNoFee from './migrations/019-default-order-index-holds-no-fee.js';
import * as priceIndexHoldsCharges from './migrations/020-price-index-holds-monthly-charges.js';
import * as cityRecords from './migrations/021-city-records.js';
import * as publishableKeys from './migrations/022-publishable-keys.js';
import * as keyOperations from './migrations/023-key-operations.js';
import type { Database } from './schema.js';
import { readThreadDatabase } from './sqlite-read-thread.js';
import { statementCache } from './sqlite-statements.js';

export type Dialect = 'sqlite' | 'postgres';

/** An open mirror database: the Kysely handle, which dialect it speaks, and how to close it. */
export interface Store {
  db: Kysely<Database>;
  /**
   * For searches' reads: on a SQLite file, a second connection on a worker thread ({@link readThreadDatabase}),
   * so that a long read does not hold the event loop; otherwise (PostgreSQL, `:memory:`, or asked so) `db`.
   */
  readDb: Kysely<Database>;
  dialect: Dialect;
  /** PostgreSQL only: the pool Kysely runs on, for what Kysely cannot say (a bulk `COPY`). */
  pool?: pg.Pool;
  close: () => Promise<void>;
}

const MIGRATIONS: Record<string, Migration> = { '001-initial': initial, '002-mirror-real-site': realSite, '003-spatial-index': spatial, '004-market-snapshots': snapshots, '005-change-events': changes, '006-webhooks': webhooks, '007-synthetic-listings': synthetic, '008-area-price-index': areaPriceIndex, '009-descending-order-indexes': descendingIndexes, '010-one-building-index': oneBuildingIndex, '011-data-versions': dataVersions, '012-one-area-index': oneAreaIndex, '013-area-statistics': areaStatistics, '014-order-indexes-hold-area-and-bedrooms': orderIndexesFilter, '015-price-per-sqft-index-holds-size': ppsfIndexSize, '016-hydration-backlog-index': backlogIndex, '017-yes-flag-indexes': yesFlagIndexes, '018-date-and-size-orders-hold-area-and-bedrooms': dateAndSizeOrdersHold, '019-default-order-index-holds-no-fee': defaultOrderHoldsNoFee, '020-price-index-holds-monthly-charges': priceIndexHoldsCharges, '021-city-records': cityRecords, '022-publishable-keys': publishableKeys, '023-key-operations': keyOperations };

class InCodeMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/** Query texts named (prepared once per PostgreSQL connection, then only bound and executed). */
const NAMED_STATEMENTS_MAX = 500;

/**
 * Makes the pool's connections run a parameterized query text they have seen before as a named
 * prepared statement: node-postgres sends every other query unnamed, so PostgreSQL parses and plans it
 * anew each time, which costs more than running a short query such as a listing's detail. A text is
 * named on its second sighting (one-off shapes never
 * take a name), up to {@link NAMED_STATEMENTS_MAX} texts; the rest run unnamed as before. PostgreSQL
 * decides per statement whether a cached generic plan is as cheap as a custom one (`plan_cache_mode`
 * auto); a sync's write transactions plan every run for its values instead (see the listings repository).
 * PostgreSQL replans a named statement by itself when an index it used is dropped or added; but one
 * that reads `*` from a table another instance has since given a column fails ("cached plan must not
 * change result type") until this process restarts, as a new version's instances are started afresh.
 */
function nameRepeatedStatements(pool: pg.Pool): void {
  const names = new Map<string, string>();
  const seenOnce = new LRUCache<string, true>({ max: 2 * NAMED_STATEMENTS_MAX });
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined || names.size >= NAMED_STATEMENTS_MAX) return known;
    if (!seenOnce.has(text)) {
      seenOnce.set(text, true);
      return undefined;
    }
    const name = `nyc_listings_${names.size}`;
    names.set(text, name);
    return name;
  };
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
      const name = typeof config === 'string' && Array.isArray(values) ? nameOf(config) : undefined;
      return name === undefined ? query(config, values, callback) : query({ name, text: config, values }, callback);
    };
  });
}

/**
 * Opens the database named by `url`: `postgres://...`/`postgresql://...` for PostgreSQL, otherwise a
 * SQLite file path (`sqlite:` prefix optional; `:memory:` for a throw-away one), in WAL mode. Runs
 * pending migrations before returning. `readThread` (default true): a SQLite file's `readDb` runs on a
 * worker thread (see {@link Store.readDb}).
 * @throws Error when the database cannot be opened or a migration fails.
 */
export async function openStore(url: string, options: { readThread?: boolean } = {}): Promise<Store> {
  let store: Store;
  if (/^postgres(ql)?:\/\//.test(url)) {
    // int8 (bigint) columns hold prices; they fit a JS number, so read them as numbers.
    pg.types.setTypeParser(20, (v) => Number(v));
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    nameRepeatedStatements(pool);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    store = { db, readDb: db, dialect: 'postgres', pool, close: () => db.destroy() };
  } else {
    const file = url.replace(/^sqlite:/, '');
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    const sqlite = new SqliteDatabase(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // A checkpoint every 80 MB of log rather than SQLite's 4 MB: a sync writes the whole city in a few
    // hundred transactions, and checkpointing after most of them doubled what their commits cost.
    sqlite.pragma('wal_autocheckpoint = 20000');
    sqlite.pragma('busy_timeout = 5000');
    // Table statistics for the query planner, gathered where missing or stale (SQLite's advice for a
    // connection that lives long); without them it may pick a filter's index over a far narrower one.
    sqlite.pragma('optimize=0x10002');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statementCache(sqlite) }) });
    // The read thread starts with its first query: commands that run no search never start it.
    const readDb = file !== ':memory:' && (options.readThread ?? true) ? readThreadDatabase(file) : db;
    store = { db, readDb, dialect: 'sqlite', close: async () => void (await Promise.all([db.destroy(), readDb === db ? undefined : readDb.destroy()])) };
  }
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
  return store;
}
