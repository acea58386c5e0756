import type { Logger } from 'pino';

/**
 * A schedule of refreshes every `intervalSeconds` (measured from each scope's last success): `tick()`
 * starts what is due, checked every `checkSeconds` at most (or every interval, when shorter). An interval
 * of 0 never starts. A failed tick is logged and the next one tries again.
 */
export abstract class IntervalScheduler {
  private timer: NodeJS.Timeout | null = null;

  protected constructor(
    readonly intervalSeconds: number,
    private readonly checkSeconds: number,
    protected readonly clock: () => Date,
    protected readonly logger: Logger,
    private readonly name: string,
  ) {}

  start(): void {
    if (this.intervalSeconds <= 0 || this.timer) return;
    const everyMs = Math.min(this.checkSeconds, this.intervalSeconds) * 1000;
    this.timer = setInterval(
      () => void this.tick().catch((e: Error) => this.logger.warn({ err: e.message }, `${this.name} tick failed`)),
      everyMs,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** When a scope last synced at `lastSuccessAt` is next due (UTC ISO 8601), or null when the schedule is off. */
  nextRefreshAt(lastSuccessAt: string | null): string | null {
    if (this.intervalSeconds <= 0) return null;
    const base = lastSuccessAt ? Date.parse(lastSuccessAt) : this.clock().getTime();
    return new Date(base + this.intervalSeconds * 1000).toISOString();
  }

  /** Starts every refresh that is due. */
  abstract tick(): Promise<void>;
}
