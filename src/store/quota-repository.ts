import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Monthly request counts per subject (`key:<id>` or `ip:<address>`), month as `YYYY-MM` (UTC). */
export class QuotaRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Adds one request to the subject's month and returns the new count (one statement, atomic). */
  async increment(subject: string, month: string): Promise<number> {
    const row = await this.db
      .insertInto('quota_usage')
      .values({ subject, month, used: 1 })
      .onConflict((oc) => oc.columns(['subject', 'month']).doUpdateSet((eb) => ({ used: eb('quota_usage.used', '+', 1) })))
      .returning('used')
      .executeTakeFirstOrThrow();
    return Number(row.used);
  }

  /** Takes one request back from the subject's month (never below zero). */
  async decrement(subject: string, month: string): Promise<void> {
    await this.db
      .updateTable('quota_usage')
      .set((eb) => ({ used: eb('used', '-', 1) }))
      .where('subject', '=', subject)
      .where('month', '=', month)
      .where('used', '>', 0)
      .execute();
  }

  async used(subject: string, month: string): Promise<number> {
    const row = await this.db.selectFrom('quota_usage').select('used').where('subject', '=', subject).where('month', '=', month).executeTakeFirst();
    return row ? Number(row.used) : 0;
  }
}
