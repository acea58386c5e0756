import type { ChangesRepository } from '../store/changes-repository.js';

/**
 * Follows the head of the change log for everyone in this process who waits for news (open streams,
 * the webhook dispatcher): one cheap poll of the newest event id every `pollSeconds` while anyone
 * waits, instead of one query per waiter. Polling the database (not an in-process signal) is what lets
 * a stream on one instance see events another instance's sync wrote.
 */
export class ChangeTail {
  private latest = 0;
  private readonly waiters = new Set<{ after: number; wake: () => void }>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly changes: ChangesRepository,
    private readonly pollSeconds: number,
  ) {}

  /**
   * Resolves when the log holds an event newer than `after` (true), or when `timeoutSeconds` pass,
   * `signal` aborts or the tail closes (false), whichever comes first. Never rejects.
   */
  wait(after: number, timeoutSeconds: number, signal?: AbortSignal): Promise<boolean> {
    if (this.latest > after) return Promise.resolve(true);
    if (this.closed || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        after,
        wake: () => {
          clearTimeout(timeout);
          signal?.removeEventListener('abort', waiter.wake);
          this.waiters.delete(waiter);
          resolve(this.latest > after);
        },
      };
      const timeout = setTimeout(waiter.wake, timeoutSeconds * 1000);
      signal?.addEventListener('abort', waiter.wake, { once: true });
      this.waiters.add(waiter);
      this.schedule();
    });
  }

  /** Wakes every waiter and stops polling (the service is closing). */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of [...this.waiters]) w.wake();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.poll(), Math.max(10, this.pollSeconds * 1000));
  }

  private async poll(): Promise<void> {
    try {
      this.latest = await this.changes.latestId();
    } catch {
      // A failed poll (database busy or closing) is retried on the next tick; waiters time out meanwhile.
    }
    this.timer = null;
    for (const w of [...this.waiters]) if (this.latest > w.after) w.wake();
    if (this.waiters.size) this.schedule();
  }
}
