/**
 * A value read from the store, kept in memory while this process's write version of it is unchanged and for at
 * most `ttlSeconds`: a write by this process shows at once, one by another instance sharing the database within
 * `ttlSeconds` (0: read every time but for concurrent callers, who share one read). A failed read is not kept.
 */
export class VersionedMemo<T> {
  private kept: { version: number; until: number; value: Promise<T> } | null = null;

  constructor(
    private readonly ttlSeconds: number,
    /** This process's write version of what is read (a repository's write count). */
    private readonly version: () => number,
    private readonly read: () => Promise<T>,
  ) {}

  /** The kept value, or a new reading when none is kept, it is older than `ttlSeconds`, or the version moved. */
  get(): Promise<T> {
    const version = this.version();
    const now = Date.now();
    const kept = this.kept;
    if (kept && kept.version === version && kept.until > now) return kept.value;
    const value = this.read();
    value.catch(() => {
      if (this.kept?.value === value) this.kept = null;
    });
    this.kept = { version, until: now + this.ttlSeconds * 1000, value };
    return value;
  }

  /** Keeps `value`, read just now at write version `version` (which the caller took before reading it). */
  keep(value: T, version: number): void {
    this.kept = { version, until: Date.now() + this.ttlSeconds * 1000, value: Promise.resolve(value) };
  }
}
