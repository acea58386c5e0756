import type { Logger } from 'pino';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import type { Syncer } from './syncer.js';

/** Coordinator key of background hydration (one at a time, like a scope's refresh). */
export const HYDRATION_KEY = 'hydration';

/** The first wait after a run gave up, and the longest (milliseconds): doubled each time in between, jittered. */
const FIRST_WAIT_MS = 30_000;
const LONGEST_WAIT_MS = 15 * 60_000;

/** Where the background hydration stands, for /v1/health and the metrics. */
export interface HydrationJobState {
  /** When the last run that emptied the backlog ended (UTC), or null. */
  lastCompletedAt: string | null;
  /** When a run that gave up is tried again (UTC), or null while none waits. */
  nextAttemptAt: string | null;
  /** Runs in a row that gave up. */
  consecutiveFailures: number;
}

/**
 * Hydrates the whole backlog in the background until it is empty, and never stops quietly: a run that gives
 * up (the upstream refusing every call after the syncer's own waits, or the store failing) is logged as a
 * warning with its cause and tried again by itself after a backoff (30 s, doubling to 15 minutes, jittered),
 * the scheduler's ticks notwithstanding. Single flight through the refresh coordinator. `afterRun` runs
 * after each run that emptied the backlog (the day's market figures, recorded sales matched to buildings).
 */
export class HydrationJob {
  private timer: NodeJS.Timeout | null = null;
  private nextAttemptMs: number | null = null;
  private failures = 0;
  private completedAt: string | null = null;
  private stopped = false;

  constructor(
    private readonly deps: {
      syncer: Syncer;
      coordinator: RefreshCoordinator;
      clock: () => Date;
      logger: Logger;
      afterRun?: (hydrated: number) => Promise<void>;
    },
  ) {}

  /**
   * Starts a run over the whole backlog unless one runs (`joined`), a backoff is being waited out
   * (`waiting`), the job is stopped, or the coordinator's queue is full (`dropped`).
   */
  resume(): 'started' | 'joined' | 'dropped' | 'waiting' {
    if (this.stopped || (this.nextAttemptMs !== null && this.deps.clock().getTime() < this.nextAttemptMs)) return 'waiting';
    return this.deps.coordinator.trigger(HYDRATION_KEY, () => this.run());
  }

  /** Resolves when the run under way, if any, has ended. */
  wait(): Promise<void> {
    return this.deps.coordinator.wait(HYDRATION_KEY);
  }

  state(): HydrationJobState {
    return {
      lastCompletedAt: this.completedAt,
      nextAttemptAt: this.nextAttemptMs === null ? null : new Date(this.nextAttemptMs).toISOString(),
      consecutiveFailures: this.failures,
    };
  }

  /** No more runs; a run under way finishes. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async run(): Promise<void> {
    const started = Date.now();
    try {
      const hydrated = await this.deps.syncer.hydrateBacklog(Infinity);
      this.failures = 0;
      this.nextAttemptMs = null;
      if (this.stopped) return;
      // A run ends with a backlog left when listings arrived meanwhile: those are for the next run.
      this.completedAt = this.deps.clock().toISOString();
      this.deps.logger.info(
        { job: 'hydration', ms: Date.now() - started, hydrated, parked: await this.deps.syncer.parked() },
        'hydration of the backlog done',
      );
      await this.deps.afterRun?.(hydrated);
    } catch (error) {
      this.failures++;
      const wait = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** (this.failures - 1)) * (0.75 + Math.random() / 2);
      this.nextAttemptMs = this.deps.clock().getTime() + wait;
      const backlog = await this.deps.syncer.backlog().catch(() => null);
      this.deps.logger.warn(
        {
          job: 'hydration',
          err: (error as Error).message,
          backlog,
          consecutiveFailures: this.failures,
          nextAttemptAt: new Date(this.nextAttemptMs).toISOString(),
        },
        'hydration of the backlog gave up: trying again at nextAttemptAt',
      );
      if (this.stopped) return;
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.timer = null;
        this.resume();
      }, wait);
      this.timer.unref();
    }
  }
}
