import type { Logger } from 'pino';
import type { QuotaRepository } from '../store/quota-repository.js';
import { SingleFlight } from '../lib/single-flight.js';

interface Tally {
  /** The month's count in the database as last read or written (other instances' requests included). */
  stored: number;
  /** Requests counted here and not yet written (a 304 given back makes it go down). */
  pending: number;
  /** The same, by day of the month (`YYYY-MM-DD`): what the writes add to each day's row. */
  pendingDays: Map<string, number>;
  lastUsed: number;
}

/**
 * Monthly request counts per subject (`key:<digest>`, `subscription:<id>` or `ip:<address>`) and month (`YYYY-MM`, UTC),
 * counted in memory by day (`YYYY-MM-DD`, UTC) and written to the database in one batch every `flushSeconds`, instead
 * of one write per request; each day's count is kept beside the month's, for the account page's chart. A count is the stored figure plus this instance's unwritten requests; the
 * stored figure is refreshed by each flush, so other instances' requests are seen within a flush.
 *
 * Worst case on a crash: the requests of the last `flushSeconds` on that instance are not counted
 * (the quota errs in the caller's favour). Across N instances, a subject may overshoot its quota by
 * what the other instances counted within one flush.
 */
export class QuotaMeter {
  private readonly tallies = new Map<string, Tally>();
  private readonly loading = new SingleFlight<string, Tally>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly repository: QuotaRepository,
    private readonly flushSeconds: number,
    private readonly logger: Logger,
  ) {}

  /** Counts one request on `day` (`YYYY-MM-DD`, UTC) and returns the count of the day's month including it. */
  async count(subject: string, day: string): Promise<number> {
    return this.countKnown(subject, day) ?? this.counted(await this.tally(subject, day.slice(0, 7)), day);
  }

  /**
   * {@link count} without waiting, when the subject's month is in memory (read or counted in the last minute): its
   * count including this request; undefined, counting nothing, when it must first be read (then call `count`).
   */
  countKnown(subject: string, day: string): number | undefined {
    const tally = this.tallies.get(`${subject}\n${day.slice(0, 7)}`);
    return tally === undefined ? undefined : this.counted(tally, day);
  }

  private counted(tally: Tally, day: string): number {
    tally.pending++;
    tally.pendingDays.set(day, (tally.pendingDays.get(day) ?? 0) + 1);
    tally.lastUsed = Date.now();
    this.schedule();
    return tally.stored + tally.pending;
  }

  /** Gives back one request counted on `day` (an answer that cost nothing: 304). */
  uncount(subject: string, day: string): void {
    const tally = this.tallies.get(`${subject}\n${day.slice(0, 7)}`);
    if (!tally) return;
    tally.pending--;
    tally.pendingDays.set(day, (tally.pendingDays.get(day) ?? 0) - 1);
    this.schedule();
  }

  /**
   * The count of each day of `month` (`YYYY-MM`) that has one, oldest first: what the store holds plus this instance's
   * unwritten requests (another instance's show once it has written them).
   */
  async days(subject: string, month: string): Promise<{ day: string; used: number }[]> {
    const stored = await this.repository.days(subject, month);
    const byDay = new Map(stored.map((d) => [d.day, d.used]));
    for (const [day, n] of this.tallies.get(`${subject}\n${month}`)?.pendingDays ?? []) byDay.set(day, (byDay.get(day) ?? 0) + n);
    return [...byDay]
      .map(([day, used]) => ({ day, used: Math.max(0, used) }))
      .filter((d) => d.used > 0)
      .sort((a, b) => (a.day < b.day ? -1 : 1));
  }

  /** The month's count as far as this instance knows (stored plus unwritten). */
  async used(subject: string, month: string): Promise<number> {
    const tally = await this.tally(subject, month);
    return Math.max(0, tally.stored + tally.pending);
  }

  /** Writes every unwritten count now (also on close). Failed writes stay pending for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }

  private async tally(subject: string, month: string): Promise<Tally> {
    const id = `${subject}\n${month}`;
    const known = this.tallies.get(id);
    if (known) return known;
    return this.loading.run(id, async () => {
      const tally = { stored: await this.repository.used(subject, month), pending: 0, pendingDays: new Map(), lastUsed: Date.now() };
      this.tallies.set(id, tally);
      return tally;
    });
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.flushSeconds * 1000);
    this.timer.unref();
  }

  private async write(): Promise<void> {
    // One item a subject and day with requests not yet written; each tally's month count is its last item's answer.
    const due = [...this.tallies].flatMap(([id, tally]) =>
      [...tally.pendingDays].filter(([, delta]) => delta !== 0).map(([day, delta]) => ({ subject: id.split('\n')[0], day, delta, tally })),
    );
    if (due.length) {
      try {
        const stored = await this.repository.addAll(due.map(({ subject, day, delta }) => ({ subject, day, delta })));
        due.forEach(({ tally, day, delta }, i) => {
          tally.pending -= delta;
          tally.pendingDays.set(day, tally.pendingDays.get(day)! - delta);
          if (tally.pendingDays.get(day) === 0) tally.pendingDays.delete(day);
          tally.stored = stored[i];
        });
      } catch (error) {
        this.logger.warn(
          { err: (error as Error).message, subjects: new Set(due.map((d) => d.subject)).size },
          'quota counts not written; kept for the next flush',
        );
        this.schedule();
      }
    }
    // Idle tallies are forgotten, so that a subject's next request reads what other instances counted.
    const idle = Date.now() - 60_000;
    for (const [id, t] of this.tallies) if (t.pending === 0 && t.lastUsed < idle) this.tallies.delete(id);
  }
}
