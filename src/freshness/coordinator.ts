import type { Logger } from 'pino';
import { SingleFlight } from '../lib/single-flight.js';
import type { RefreshLock } from './refresh-lock.js';

/**
 * Runs background refreshes with single flight per key: while a refresh of a key runs, asking for it
 * again joins the running one. At most `concurrency` run at once; at most `maxQueued` wait, and a
 * request beyond that is dropped (the data stays stale and a later request asks again). A failed
 * refresh keeps the stored data (stale-if-error); it is logged at debug, the refresh having logged it. With a {@link RefreshLock}, a refresh
 * another instance is already running is skipped here.
 */
export class RefreshCoordinator {
  private readonly running = new SingleFlight<string, void>();
  private readonly queue: { key: string; task: () => Promise<unknown>; done: () => void }[] = [];
  private active = 0;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    private readonly concurrency = 2,
    private readonly maxQueued = 100,
    private readonly lock: RefreshLock | null = null,
  ) {}

  /** Whether a refresh of `key` runs here or, with a shared lock, on any instance. */
  async isRunningAnywhere(key: string): Promise<boolean> {
    return this.running.has(key) || (this.lock !== null && (await this.lock.isHeld(key)));
  }

  private async runLocked(key: string, task: () => Promise<unknown>): Promise<void> {
    if (!this.lock) {
      await task();
      return;
    }
    const release = await this.lock.acquire(key);
    if (!release) {
      this.logger.debug({ key }, 'refresh already running on another instance');
      return;
    }
    try {
      await task();
    } finally {
      await release();
    }
  }

  /** Whether a refresh of `key` is running or queued. */
  isRunning(key: string): boolean {
    return this.running.has(key);
  }

  /** The keys of the refreshes running or queued here. */
  keys(): string[] {
    return this.running.keys();
  }

  /**
   * Starts the refresh of `key`: `started` by this call, `joined` when one was already running or
   * queued here, `dropped` when the queue was full.
   */
  trigger(key: string, task: () => Promise<unknown>): 'started' | 'joined' | 'dropped' {
    if (this.running.has(key)) return 'joined';
    if (this.closed || this.queue.length >= this.maxQueued) return 'dropped';
    void this.running.run(key, () => new Promise<void>((done) => this.queue.push({ key, task, done })));
    this.pump();
    return 'started';
  }

  /** Resolves when the refresh of `key` (if any) has ended. */
  async wait(key: string): Promise<void> {
    await this.running.get(key);
  }

  /** Resolves when nothing is running or queued. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all(this.running.runs());
  }

  /**
   * Stops for a shutdown: the refreshes still queued are dropped (never started, so nothing of theirs was written;
   * their data stays stale for the next start to refresh), later triggers are dropped, and this resolves when the
   * refreshes already running have ended. A shutdown so waits for at most `concurrency` refreshes, not for a queue.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.done();
    await this.idle();
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length) {
      const job = this.queue.shift()!;
      this.active++;
      this.runLocked(job.key, job.task)
        .catch((error: Error) => this.logger.debug({ key: job.key, err: error.message }, 'background refresh failed; serving stored data'))
        .finally(() => {
          this.active--;
          job.done();
          this.pump();
        });
    }
  }
}
