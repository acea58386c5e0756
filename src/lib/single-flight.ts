/**
 * Single flight: calls for the same key that overlap share one run of the work. The first call starts it; the
 * ones made while it runs get the same promise; once it settles (fulfilled or rejected) the next call starts
 * a new run. Nothing is kept after a run: a cache of results is the caller's.
 */
export class SingleFlight<K, V> {
  private readonly running = new Map<K, Promise<V>>();

  /** The run of `key` under way, or a new one of `work`. */
  run(key: K, work: () => Promise<V>): Promise<V> {
    const known = this.running.get(key);
    if (known) return known;
    const started = work().finally(() => {
      if (this.running.get(key) === started) this.running.delete(key);
    });
    this.running.set(key, started);
    return started;
  }

  /** Whether a run of `key` is under way. */
  has(key: K): boolean {
    return this.running.has(key);
  }

  /** The run of `key` under way, if any. */
  get(key: K): Promise<V> | undefined {
    return this.running.get(key);
  }

  /** How many runs are under way. */
  get size(): number {
    return this.running.size;
  }

  /** The keys of the runs under way. */
  keys(): K[] {
    return [...this.running.keys()];
  }

  /** The runs under way. */
  runs(): Promise<V>[] {
    return [...this.running.values()];
  }
}
