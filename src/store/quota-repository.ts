import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Monthly request counts per subject (written in batches by the access layer's QuotaMeter) (`key:<id>` or `ip:<address>`), month as `YYYY-MM` (UTC). */
export class QuotaRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Adds each delta (requests counted since the last write; may be negative after 304s given back) to
   * its subject's month, in one transaction, and returns the new counts in the same order.
   */
  async addAll(items: { subject: string; month: string; delta: number }[]): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const counts: number[] = [];
      for (const { subject, month, delta } of items) {
        const row = await trx
          .insertInto('quota_usage')
          .values({ subject, month, used: Math.max(0, delta) })
          .onConflict((oc) => oc.columns(['subject', 'month']).doUpdateSet((eb) => ({ used: eb('quota_usage.used', '+', delta) })))
          .returning('used')
          .executeTakeFirstOrThrow();
        counts.push(Number(row.used));
      }
      return counts;
    });
  }

  async used(subject: string, month: string): Promise<number> {
    const row = await this.db
      .selectFrom('quota_usage')
      .select('used')
      .where('subject', '=', subject)
      .where('month', '=', month)
      .executeTakeFirst();
    return row ? Number(row.used) : 0;
  }
}
