/**
 * A value read from the store, kept in memory while this process's write count of what it reads is unchanged and
 * for at most `readCacheSeconds`: a write by this process shows at once, one by another instance sharing the
 * database within `readCacheSeconds` (0: read every time but for concurrent callers, who share one read). A failed
 * read is not kept.
 *
 * With `version` (a read of one stored counter that every write of what is read moves, such as a row of
 * `data_versions`), a value past its `readCacheSeconds` is kept for another period when the counter has not moved
 * since it was read, rather than read whole again: a large value (the area tree with its outlines) then costs one
 * row a period. The counter is read before the value, so that a write between the two reads makes the next period
 * read the value again.
 */
export class ReadMemo<T> {
  private kept: { writeCount: number; until: number; value: Promise<T>; version: Promise<number> | null } | null = null;

  constructor(
    private readonly readCacheSeconds: number,
    /** This process's write count of what is read (a repository's `writeCount`). */
    private readonly writeCount: () => number,
    private readonly read: () => Promise<T>,
    /** The stored counter of what is read, when it has one. */
    private readonly version?: () => Promise<number>,
  ) {}

  /**
   * The kept value; or, when none is kept, it is older than `readCacheSeconds` or the write count moved, a new
   * reading (the kept value again when the stored counter has not moved).
   */
  get(): Promise<T> {
    const writeCount = this.writeCount();
    const now = Date.now();
    const kept = this.kept;
    if (kept && kept.writeCount === writeCount && kept.until > now) return kept.value;
    const version = this.version?.() ?? null;
    let value: Promise<T>;
    if (!version) value = this.read();
    else if (kept?.writeCount === writeCount && kept.version) {
      const before = kept;
      value = Promise.all([version, before.version]).then(([moved, then]) => (moved === then ? before.value : this.read()));
    } else value = version.then(() => this.read());
    value.catch(() => {
      if (this.kept?.value === value) this.kept = null;
    });
    this.kept = { writeCount, until: now + this.readCacheSeconds * 1000, value, version };
    return value;
  }

  /** Keeps `value`, read just now at write count `writeCount` (which the caller took before reading it). */
  keep(value: T, writeCount: number): void {
    this.kept = { writeCount, until: Date.now() + this.readCacheSeconds * 1000, value: Promise.resolve(value), version: null };
  }
}
