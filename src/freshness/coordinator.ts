import type { Logger } from 'pino';

/**
 * Runs background refreshes with single flight per key: while a refresh of a key runs, asking for it
 * again joins the running one. At most `concurrency` run at once; at most `maxQueued` wait, and a
 * request beyond that is dropped (the data stays stale and a later request asks again). A failed
 * refresh is logged and keeps the stored data (stale-if-error).
 */
export class RefreshCoordinator {
  private readonly running = new Map<string, Promise<void>>();
  private readonly queue: { key: string; task: () => Promise<unknown>; done: () => void }[] = [];
  private active = 0;

  constructor(
    private readonly logger: Logger,
    private readonly concurrency = 2,
    private readonly maxQueued = 100,
  ) {}

  /** Whether a refresh of `key` is running or queued. */
  isRunning(key: string): boolean {
    return this.running.has(key);
  }

  /** Starts (or joins) the refresh of `key`. Returns false when the queue was full and it was dropped. */
  trigger(key: string, task: () => Promise<unknown>): boolean {
    if (this.running.has(key)) return true;
    if (this.queue.length >= this.maxQueued) return false;
    const promise = new Promise<void>((done) => this.queue.push({ key, task, done }));
    this.running.set(key, promise);
    this.pump();
    return true;
  }

  /** Resolves when the refresh of `key` (if any) has ended. */
  async wait(key: string): Promise<void> {
    await this.running.get(key);
  }

  /** Resolves when nothing is running or queued. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()]);
  }

  private pump(): void {
    while (this.active < this.concurrency && this.queue.length) {
      const job = this.queue.shift()!;
      this.active++;
      job
        .task()
        .catch((error: Error) => this.logger.warn({ key: job.key, err: error.message }, 'background refresh failed; serving stored data'))
        .finally(() => {
          this.active--;
          this.running.delete(job.key);
          job.done();
          this.pump();
        });
    }
  }
}
