import { CompiledQuery, PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type pg from 'pg';
import { bulkVersionBump, bumpDataVersion, dataVersionBump } from './data-version.js';
import type { ListingRow } from './listing-rows.js';
import { copyRows } from './postgres-copy.js';
import type { Database } from './schema.js';

/** Removes every synthetic listing and its amenities in `trx`; returns how many listings were removed. */
async function removeSynthetic(trx: Transaction<Database>): Promise<number> {
  await trx
    .deleteFrom('listing_amenities')
    .where('listing_id', 'in', (eb) => eb.selectFrom('listings').select('id').where('synthetic', '=', 1))
    .execute();
  return Number((await trx.deleteFrom('listings').where('synthetic', '=', 1).executeTakeFirst()).numDeletedRows);
}

/**
 * A row's values in its own key order, which the caller took from the first row's keys (reading sixty
 * columns by name a row cost a tenth of a seed's time).
 * @throws Error when the row has another number of columns.
 */
function valuesInOrder(row: ListingRow, columns: number): unknown[] {
  const values = Object.values(row);
  if (values.length !== columns) throw new Error(`synthetic row ${row.id} has ${values.length} columns, the first has ${columns}`);
  return values;
}

/**
 * Runs `insert into <table> (<columns>) values (?, ...), (...)` on SQLite with `values`: rows of `columns`
 * flattened, row after row. The statement's text is written once per table and row count and kept in
 * `texts` (one map per load, whose rows of a table all have the same columns): Kysely would build and
 * compile a tree of every value of every row, an eighth of a seed's time (profiled).
 */
async function insertRows(
  trx: Transaction<Database>,
  texts: Map<string, string>,
  table: string,
  columns: readonly string[],
  values: unknown[],
): Promise<void> {
  const rows = values.length / columns.length;
  const key = `${table}|${rows}`;
  let text = texts.get(key);
  if (!text) {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    text = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: rows }, () => tuple).join(', ')}`;
    texts.set(key, text);
  }
  await trx.executeQuery(CompiledQuery.raw(text, values));
}

/**
 * The synthetic listings of `nyc-listings seed` (benchmarks; `synthetic` = 1): their bulk load and removal. Every write bumps the listings' data version, so that
 * every instance's read caches see it, and the bulk version (migration 031), since its rows carry no version of their own.
 */
export class SyntheticListingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Removes every synthetic listing and its amenities; returns how many there were. */
  async deleteSynthetic(): Promise<number> {
    const removed = await this.db.transaction().execute(async (trx) => {
      const deleted = await removeSynthetic(trx);
      await bulkVersionBump(trx).execute();
      await bumpDataVersion(trx);
      return deleted;
    });
    return removed;
  }

  /**
   * Replaces the synthetic listings (benchmarks; `synthetic` = 1): removes the earlier ones and loads
   * `batches` with their amenities, without price or change events: they are not changes of the market.
   * On SQLite in one transaction: the listing indexes (all but the primary key's) and the spatial index
   * are dropped first and built again before the commit, a sort each, far cheaper than updating twenty
   * indexes a row; the removal then touches no index but the key's (a re-seed that removed them with the
   * indexes in place took three times as long: docs/benchmark-history.md). On PostgreSQL the removal commits first
   * ({@link copySynthetic}), then the load does the same with its rows copied in by `COPY` on a connection
   * of `pool` (the store's; required there). DDL is transactional on both databases, so a failed load
   * leaves the indexes as they were. `onBatch` is told how many were written so far. Every row has the
   * columns of the first (rows of the table, as `mirrored` reads them and the seed derives them). Returns
   * how many were removed and added.
   * @throws Error when PostgreSQL is given no pool, or from the database (no listing is loaded then).
   */
  async replaceSynthetic(
    batches: Iterable<{ row: ListingRow; amenities: string[] }[]>,
    onBatch: (written: number) => void,
    pool?: pg.Pool,
  ): Promise<{ removed: number; added: number }> {
    if (this.db.getExecutor().adapter instanceof PostgresAdapter) {
      if (!pool) throw new Error("loading synthetic listings into PostgreSQL needs the store's pool");
      return this.copySynthetic(pool, batches, onBatch);
    }
    let written = 0;
    let removed = 0;
    await this.db.transaction().execute(async (trx) => {
      // Every index but those backing a constraint (the primary key): SQLite's `sql` is null for those.
      const indexes = (
        await sql<{
          name: string;
          sql: string;
        }>`select name, sql from sqlite_master where type = 'index' and tbl_name = 'listings' and sql is not null`.execute(trx)
      ).rows;
      for (const index of indexes) await sql`drop index ${sql.ref(index.name)}`.execute(trx);
      // The spatial index (migration 003) likewise: its table and the triggers that keep it row by row
      // are dropped, and it is filled again from every placed listing in one statement after the load.
      const spatial = (
        await sql<{ type: string; name: string; sql: string }>`select type, name, sql from sqlite_master
        where (type = 'table' and name = 'listings_rtree') or (type = 'trigger' and tbl_name = 'listings' and sql like '%listings_rtree%')`.execute(
          trx,
        )
      ).rows;
      const rtree = spatial.find((o) => o.type === 'table');
      const triggers = spatial.filter((o) => o.type === 'trigger');
      for (const trigger of triggers) await sql`drop trigger ${sql.ref(trigger.name)}`.execute(trx);
      if (rtree) await sql`drop table listings_rtree`.execute(trx);
      removed = await removeSynthetic(trx);
      const texts = new Map<string, string>();
      for (const items of batches) {
        // Rows of about 60 columns: 250 a statement stays under SQLite's parameter limit.
        for (let i = 0; i < items.length; i += 250) {
          const batch = items.slice(i, i + 250);
          const columns = Object.keys(batch[0].row);
          const values: unknown[] = [];
          for (const { row } of batch) for (const value of valuesInOrder(row, columns.length)) values.push(value);
          await insertRows(trx, texts, 'listings', columns, values);
          // The amenities likewise (about 0.9 of a row a listing): statements of at most 1,000 (listing, amenity) pairs.
          const pairs: unknown[] = [];
          for (const { row, amenities } of batch) for (const amenity of amenities) pairs.push(row.id, amenity);
          for (let j = 0; j < pairs.length; j += 2000)
            await insertRows(trx, texts, 'listing_amenities', ['listing_id', 'amenity'], pairs.slice(j, j + 2000));
        }
        written += items.length;
        onBatch(written);
      }
      for (const index of indexes) await sql.raw(index.sql).execute(trx);
      if (rtree) {
        await sql.raw(rtree.sql).execute(trx);
        await sql`insert into listings_rtree select rowid, latitude, latitude, longitude, longitude from listings where latitude is not null and longitude is not null`.execute(
          trx,
        );
      }
      for (const trigger of triggers) await sql.raw(trigger.sql).execute(trx);
      await bulkVersionBump(trx).execute();
      await bumpDataVersion(trx);
    });
    return { removed, added: written };
  }

  /**
   * {@link replaceSynthetic} on PostgreSQL: the same steps on one connection of `pool`, the rows and
   * amenities copied in, but the earlier synthetic listings removed first, in a transaction of their own.
   * A delete there only marks the rows, indexes or not, while an index built in the transaction that
   * deleted them must still hold them, so a re-seed in one transaction took longer than one with the
   * removal committed first.
   */
  private async copySynthetic(
    pool: pg.Pool,
    batches: Iterable<{ row: ListingRow; amenities: string[] }[]>,
    onBatch: (written: number) => void,
  ): Promise<{ removed: number; added: number }> {
    let written = 0;
    const removed = await this.deleteSynthetic();
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      await client.query('begin');
      // The rebuilt indexes sort in memory rather than on disk; the seed is re-runnable, so its commit need not wait for the WAL flush.
      await client.query(`set local maintenance_work_mem = '256MB'`);
      await client.query('set local synchronous_commit = off');
      // Every index but those backing a constraint (the primary key).
      const { rows: indexes } = await client.query<{
        name: string;
        sql: string;
      }>(`select i.indexname as name, i.indexdef as sql from pg_indexes i
        where i.schemaname = current_schema() and i.tablename = 'listings'
        and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.connamespace = to_regnamespace(current_schema()))`);
      for (const index of indexes) await client.query(`drop index "${index.name.replace(/"/g, '""')}"`);
      for (const items of batches) {
        if (!items.length) continue;
        const columns = Object.keys(items[0].row);
        await copyRows(
          client,
          'listings',
          columns,
          items.map(({ row }) => valuesInOrder(row, columns.length)),
        );
        await copyRows(
          client,
          'listing_amenities',
          ['listing_id', 'amenity'],
          items.flatMap(({ row, amenities }) => amenities.map((amenity) => [row.id, amenity])),
        );
        written += items.length;
        onBatch(written);
      }
      for (const index of indexes) await client.query(index.sql);
      // The statements of bumpDataVersion and the bulk version's, on this connection.
      for (const statement of [bulkVersionBump(this.db), dataVersionBump(this.db)]) {
        const bump = statement.compile();
        await client.query(bump.sql, [...bump.parameters]);
      }
      await client.query('commit');
    } catch (error) {
      failure = error as Error;
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      // A connection that failed mid-COPY is closed rather than handed back to the pool.
      client.release(failure);
    }
    return { removed, added: written };
  }
}
