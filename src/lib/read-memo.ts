/**
 * A value read from the store, kept in memory while this process's write count of what it reads is unchanged and
 * for at most `readCacheSeconds`: a write by this process shows at once, one by another instance sharing the
 * database within `readCacheSeconds` (0: read every time but for concurrent callers, who share one read). A failed
 * read is not kept.
 */
export class ReadMemo<T> {
  private kept: { writeCount: number; until: number; value: Promise<T> } | null = null;

  constructor(
    private readonly readCacheSeconds: number,
    /** This process's write count of what is read (a repository's `writeCount`). */
    private readonly writeCount: () => number,
    private readonly read: () => Promise<T>,
  ) {}

  /** The kept value, or a new reading when none is kept, it is older than `readCacheSeconds`, or the write count moved. */
  get(): Promise<T> {
    const writeCount = this.writeCount();
    const now = Date.now();
    const kept = this.kept;
    if (kept && kept.writeCount === writeCount && kept.until > now) return kept.value;
    const value = this.read();
    value.catch(() => {
      if (this.kept?.value === value) this.kept = null;
    });
    this.kept = { writeCount, until: now + this.readCacheSeconds * 1000, value };
    return value;
  }

  /** Keeps `value`, read just now at write count `writeCount` (which the caller took before reading it). */
  keep(value: T, writeCount: number): void {
    this.kept = { writeCount, until: Date.now() + this.readCacheSeconds * 1000, value: Promise.resolve(value) };
  }
}
