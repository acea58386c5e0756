import type { Logger } from 'pino';
import type { QuotaRepository } from '../store/quota-repository.js';
import { SingleFlight } from '../lib/single-flight.js';

interface Tally {
  /** The month's count in the database as last read or written (other instances' requests included). */
  stored: number;
  /** Requests counted here and not yet written (a 304 given back makes it go down). */
  pending: number;
  lastUsed: number;
}

/**
 * Monthly request counts per subject (`key:<digest>` or `ip:<address>`) and month (`YYYY-MM`, UTC),
 * counted in memory and written to the database in one batch every `flushSeconds`, instead of one
 * write per request. A count is the stored figure plus this instance's unwritten requests; the
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

  /** Counts one request and returns the month's count including it. */
  async count(subject: string, month: string): Promise<number> {
    return this.countKnown(subject, month) ?? this.counted(await this.tally(subject, month));
  }

  /**
   * {@link count} without waiting, when the subject's month is in memory (read or counted in the last minute): its
   * count including this request; undefined, counting nothing, when it must first be read (then call `count`).
   */
  countKnown(subject: string, month: string): number | undefined {
    const tally = this.tallies.get(`${subject}\n${month}`);
    return tally === undefined ? undefined : this.counted(tally);
  }

  private counted(tally: Tally): number {
    tally.pending++;
    tally.lastUsed = Date.now();
    this.schedule();
    return tally.stored + tally.pending;
  }

  /** Gives one counted request back (an answer that cost nothing: 304). */
  uncount(subject: string, month: string): void {
    const tally = this.tallies.get(`${subject}\n${month}`);
    if (!tally) return;
    tally.pending--;
    this.schedule();
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
      const tally = { stored: await this.repository.used(subject, month), pending: 0, lastUsed: Date.now() };
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
    const due = [...this.tallies].filter(([, t]) => t.pending !== 0).map(([id, t]) => ({ id, tally: t, delta: t.pending }));
    if (due.length) {
      try {
        const stored = await this.repository.addAll(
          due.map(({ id, delta }) => ({ subject: id.split('\n')[0], month: id.split('\n')[1], delta })),
        );
        due.forEach(({ tally, delta }, i) => {
          tally.pending -= delta;
          tally.stored = stored[i];
        });
      } catch (error) {
        this.logger.warn({ err: (error as Error).message, subjects: due.length }, 'quota counts not written; kept for the next flush');
        this.schedule();
      }
    }
    // Idle tallies are forgotten, so that a subject's next request reads what other instances counted.
    const idle = Date.now() - 60_000;
    for (const [id, t] of this.tallies) if (t.pending === 0 && t.lastUsed < idle) this.tallies.delete(id);
  }
}
