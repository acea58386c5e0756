import type { AttemptRecord } from '../store/webhooks-repository.js';

/**
 * Records webhook attempts' outcomes in batches, one `write` (a transaction) at a time: on SQLite the sync's long
 * write transactions hold the one writer, and a record for every attempt waited behind each of them. The first
 * failed write is kept in `error` (the pass stops on it); `recorded` is told of each batch written.
 */
export class AttemptRecorder {
  private readonly records: AttemptRecord[] = [];
  private recording: Promise<void> | null = null;
  /** The first write that failed, or null. */
  error: unknown = null;

  constructor(
    private readonly write: (batch: AttemptRecord[]) => Promise<void>,
    private readonly recorded: (batch: AttemptRecord[]) => void,
  ) {}

  /** Queues `record`, written with the others queued once the write under way (if any) is done. */
  add(record: AttemptRecord): void {
    this.records.push(record);
    this.flush();
  }

  /** Resolves once every record queued is written (or its write failed). */
  async drain(): Promise<void> {
    while (this.recording || this.records.length) {
      this.flush();
      await this.recording;
    }
  }

  private flush(): void {
    if (this.recording || !this.records.length) return;
    const batch = this.records.splice(0);
    this.recording = this.write(batch)
      .then(
        () => this.recorded(batch),
        (error: unknown) => {
          this.error ??= error;
        },
      )
      .finally(() => {
        this.recording = null;
        this.flush();
      });
  }
}
