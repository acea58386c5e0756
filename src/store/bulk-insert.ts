import { CompiledQuery, type Insertable, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Multi-row inserts into `table` for bulk loads, compiled by Kysely once per batch size and then run
 * again with each batch's values: building and compiling a statement of thousands of values is most of
 * a bulk load's time otherwise. Every row must have the same columns in the same order (rows made by
 * one function). The first batch of each size checks that the reused order gives Kysely's own parameters.
 */
export class BulkInsert<T extends keyof Database> {
  private readonly shapes = new Map<number, { sql: string; columns: string[] }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly table: T,
  ) {}

  /** Inserts `rows` (one statement; keep a batch under the database's parameter limit). */
  async insert(rows: Insertable<Database[T]>[]): Promise<void> {
    if (!rows.length) return;
    const values = (columns: string[]) => rows.flatMap((row) => columns.map((column) => (row as Record<string, unknown>)[column]));
    const shape = this.shapes.get(rows.length);
    if (shape) {
      await this.db.executeQuery(CompiledQuery.raw(shape.sql, values(shape.columns)));
      return;
    }
    const compiled = this.db.insertInto(this.table).values(rows as never).compile();
    const columns = Object.keys(rows[0]);
    const mine = values(columns);
    if (mine.length !== compiled.parameters.length || mine.some((value, i) => value !== compiled.parameters[i])) {
      throw new Error(`BulkInsert(${String(this.table)}): rows differ in their columns; insert them with Kysely directly`);
    }
    this.shapes.set(rows.length, { sql: compiled.sql, columns });
    await this.db.executeQuery(compiled);
  }
}
