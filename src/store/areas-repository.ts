import type { Kysely } from 'kysely';
import { AreaTree, type Area } from '../domain/area.js';
import type { Database } from './schema.js';
import { ReadMemo } from '../lib/read-memo.js';
import { versionBump } from './data-version.js';

/** Areas in the mirror (API numbering), and the area tree kept in memory. */
export class AreasRepository {
  private writes = 0;
  private readonly kept: ReadMemo<AreaTree>;

  /**
   * `rereadSeconds`: how long the tree is kept before the area list's counter is read again (0: read every time);
   * the list itself is read again only when the counter moved. `db` writes; `reader` (the store's `readDb`) answers
   * reads, which so never wait behind a long write transaction.
   */
  constructor(
    private readonly db: Kysely<Database>,
    rereadSeconds = 0,
    private readonly reader: Kysely<Database> = db,
  ) {
    this.kept = new ReadMemo(
      rereadSeconds,
      () => this.writes,
      async () => new AreaTree(await this.list()),
      () => this.version(),
    );
  }

  /** How many times this process replaced the area list: caches keyed by it see a local area sync at once. */
  get writeCount(): number {
    return this.writes;
  }

  /** Replaces the whole area list in one transaction. */
  async replaceAll(areas: Area[]): Promise<void> {
    const tree = new AreaTree(areas);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('areas').execute();
      for (let i = 0; i < areas.length; i += 200) {
        await trx
          .insertInto('areas')
          .values(
            areas.slice(i, i + 200).map((a) => ({
              id: a.id,
              name: a.name,
              level: a.level,
              parent_id: a.parentId,
              slug: a.slug,
              borough_id: tree.boroughOf(a.id) ?? a.id,
              outline: a.outline,
            })),
          )
          .execute();
      }
      await versionBump(trx, 'areas').execute();
    });
    this.writes++;
  }

  /** The area list's counter (`data_versions`, migration 035): it moves with every replacement of the list, by any instance. */
  async version(): Promise<number> {
    const row = await this.reader.selectFrom('data_versions').select('version').where('name', '=', 'areas').executeTakeFirstOrThrow();
    return Number(row.version);
  }

  /** Areas ordered by id, optionally only one level and/or one borough (API borough id). */
  async list(filter: { level?: number; borough?: number } = {}): Promise<Area[]> {
    let q = this.reader.selectFrom('areas').selectAll().orderBy('id');
    if (filter.level !== undefined) q = q.where('level', '=', filter.level);
    if (filter.borough !== undefined) q = q.where('borough_id', '=', filter.borough);
    const rows = await q.execute();
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      level: r.level as Area['level'],
      parentId: r.parent_id,
      slug: r.slug,
      outline: r.outline,
    }));
  }

  /**
   * The area tree of the stored areas (empty when none are stored). Kept in memory: read again at once after this
   * process replaced the list, and after another instance sharing the database did, which the list's counter
   * shows within `rereadSeconds`. A failed read is not kept.
   */
  tree(): Promise<AreaTree> {
    return this.kept.get();
  }
}
