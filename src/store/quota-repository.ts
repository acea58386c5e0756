import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Request counts per subject (`key:<digest>`, `subscription:<id>` or `ip:<address>`): by month (`YYYY-MM`, UTC), what
 * quotas are held to, and by day (`YYYY-MM-DD`, UTC), what the account page charts. Written in batches by the access
 * layer's QuotaMeter.
 */
export class QuotaRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Adds each delta (requests counted on its day since the last write; may be negative after 304s given back) to its
   * subject's day and to the day's month, in one transaction, and returns the month's new count after each item, in
   * the same order.
   */
  async addAll(items: { subject: string; day: string; delta: number }[]): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const counts: number[] = [];
      for (const { subject, day, delta } of items) {
        await trx
          .insertInto('quota_usage_days')
          .values({ subject, day, used: Math.max(0, delta) })
          .onConflict((oc) => oc.columns(['subject', 'day']).doUpdateSet((eb) => ({ used: eb('quota_usage_days.used', '+', delta) })))
          .execute();
        const row = await trx
          .insertInto('quota_usage')
          .values({ subject, month: day.slice(0, 7), used: Math.max(0, delta) })
          .onConflict((oc) => oc.columns(['subject', 'month']).doUpdateSet((eb) => ({ used: eb('quota_usage.used', '+', delta) })))
          .returning('used')
          .executeTakeFirstOrThrow();
        counts.push(Number(row.used));
      }
      return counts;
    });
  }

  /** The month's count (0 when none). */
  async used(subject: string, month: string): Promise<number> {
    const row = await this.db
      .selectFrom('quota_usage')
      .select('used')
      .where('subject', '=', subject)
      .where('month', '=', month)
      .executeTakeFirst();
    return row ? Number(row.used) : 0;
  }

  /** The stored count of each day of `month` that has a row, oldest first. */
  async days(subject: string, month: string): Promise<{ day: string; used: number }[]> {
    const rows = await this.db
      .selectFrom('quota_usage_days')
      .select(['day', 'used'])
      .where('subject', '=', subject)
      .where('day', '>=', `${month}-01`)
      .where('day', '<=', `${month}-31`)
      .orderBy('day')
      .execute();
    return rows.map((r) => ({ day: r.day, used: Number(r.used) }));
  }
}
