import type SqliteDatabase from 'better-sqlite3';
import type { SqliteDatabase as KyselySqliteDatabase, SqliteStatement } from 'kysely';
import { LRUCache } from 'lru-cache';

/** Prepared statements of few parameters kept per SQLite connection (distinct query texts; the least recently used go). */
const STATEMENT_CACHE_SIZE = 1000;

/**
 * Parameters past which a statement is a batch's (a crawl's page staged, a hundred listings written, an `in` list of
 * ids): its text changes with the batch's size, and SQLite's memory for a prepared statement grows with its
 * parameters. Kept with the others, the crawl's pages alone filled the cache with a new text for each size of page,
 * the background thread's memory growing sync after sync (docs/benchmark-history.md, "a batch's statements kept apart").
 */
export const BATCH_STATEMENT_PARAMETERS = 100;

/** Statements of more than {@link BATCH_STATEMENT_PARAMETERS} kept per connection: a sync's full batches, reused from one to the next. */
export const BATCH_STATEMENT_CACHE_SIZE = 16;

/** Builds a row object from a raw row (an array of column values in select order). */
export type RowBuilder = (values: unknown[]) => Record<string, unknown>;

/**
 * A function that turns a raw row into an object with these keys, in this order. `generated` (ROW_BUILDERS, the
 * default): an object literal written as source once per statement, so that every row of it gets the same hidden
 * class at once, the way a literal in code would. Otherwise a loop assigning each column (the same object, built
 * a property at a time). Both keep better-sqlite3's own rules for odd names: a later duplicate wins, and
 * `__proto__` is set as a prototype (ignored for a value that is not an object), not as a property.
 */
export function rowBuilder(names: string[], generated = true): RowBuilder {
  if (!generated)
    return (values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
      return row;
    };
  const properties = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ');
  return new Function('values', `return { ${properties} };`) as RowBuilder;
}

/**
 * One prepared statement as Kysely's SQLite driver uses it (`reader`, `all`, `run`, `iterate`), its
 * rows read as arrays (better-sqlite3's raw mode) and made objects here. better-sqlite3 builds each
 * row object through V8's API, a property at a time, which for a page of search results took about
 * twice as long as the raw arrays and a generated literal (figures in commit c569dc3). With ROW_BUILDERS off
 * (`generated` false), rows are made objects by a plain loop ({@link rowBuilder}).
 */
class RawRowStatement implements SqliteStatement {
  readonly reader: boolean;
  private names: string[] = [];
  private build: RowBuilder | null = null;

  constructor(
    readonly native: SqliteDatabase.Statement,
    private readonly generated: boolean,
  ) {
    this.reader = native.reader;
    if (this.reader) native.raw(true);
  }

  /** Whether the statement is being iterated (and cannot run again until that ends). */
  get busy(): boolean {
    return this.native.busy;
  }

  all(parameters: ReadonlyArray<unknown>): unknown[] {
    const rows = this.native.all(parameters) as unknown[][];
    if (!rows.length) return rows;
    const build = this.builderFor(rows[0].length);
    const objects = new Array<Record<string, unknown>>(rows.length);
    for (let i = 0; i < rows.length; i++) objects[i] = build(rows[i]);
    return objects;
  }

  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return this.native.run(parameters);
  }

  *iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    for (const row of this.native.iterate(parameters) as IterableIterator<unknown[]>) yield this.builderFor(row.length)(row);
  }

  /**
   * The builder of this statement's rows. SQLite prepares a statement again by itself when the schema
   * changes, so a `select *` may come back with other columns: the names are read again when the
   * width of a row differs from what they were read for.
   */
  private builderFor(width: number): RowBuilder {
    if (!this.build || width !== this.names.length) {
      this.names = this.native.columns().map((column) => column.name);
      this.build = rowBuilder(this.names, this.generated);
    }
    return this.build;
  }
}

/**
 * The SQLite database Kysely is given: `prepare` returns the statement already prepared for the same
 * SQL text (Kysely prepares every query it runs, and preparing costs as much as running a short
 * query), reading rows as {@link RawRowStatement} does. A cached statement is only reused when idle
 * (an iterating one is busy); SQLite re-prepares it by itself if the schema changes. The query shapes
 * of the API are few, so the cache keeps them all; a batch's statements, whose texts change with its size, are kept apart,
 * {@link BATCH_STATEMENT_CACHE_SIZE} at most. The connection's own `prepare` is left as it was.
 *
 * `immediateTransactions` (the writer's connection): Kysely's `begin` becomes `begin immediate`, which takes the write
 * lock at once, waiting the busy timeout for it. A deferred transaction that read before it wrote was refused at its
 * first write (SQLITE_BUSY_SNAPSHOT, "database is locked", without waiting) whenever another connection had written or
 * started the log over since its read: a hydration batch failed so at a first start, when the checkpoints' thread
 * started the log over (it no longer does, src/store/wal-checkpoints.ts; another process still may).
 */
export function statementCache(
  sqlite: SqliteDatabase.Database,
  options: { rowBuilders?: boolean; immediateTransactions?: boolean } = {},
): KyselySqliteDatabase {
  const generated = options.rowBuilders ?? true;
  const statements = new LRUCache<string, RawRowStatement>({ max: STATEMENT_CACHE_SIZE });
  const batches = new LRUCache<string, RawRowStatement>({ max: BATCH_STATEMENT_CACHE_SIZE });
  return {
    close: () => sqlite.close(),
    prepare: (asked: string) => {
      const source = options.immediateTransactions && asked === 'begin' ? 'begin immediate' : asked;
      const cached = statements.get(source) ?? batches.get(source);
      if (cached && !cached.busy) return cached;
      const statement = new RawRowStatement(sqlite.prepare(source), generated);
      (parameterCount(source) > BATCH_STATEMENT_PARAMETERS ? batches : statements).set(source, statement);
      return statement;
    },
  };
}

/** The `?` placeholders of a statement's text (Kysely passes every value as one; none is inside a literal of ours). */
function parameterCount(source: string): number {
  let count = 0;
  for (let at = source.indexOf('?'); at !== -1; at = source.indexOf('?', at + 1)) count++;
  return count;
}
