/** How an answer was served (spec 2.1 `meta.source`). */
export type Source = 'cached' | 'stale' | 'refreshing';

/** Freshness facts of one answer, as `meta` shows them. `dataAge` is UTC ISO 8601, the threshold seconds. */
export interface Freshness {
  dataAge: string;
  source: Source;
  freshnessThreshold: number;
  refreshTriggered: boolean;
}

/**
 * Whether data refreshed at `refreshedAt` is within `thresholdSeconds` of `now` (then it is `cached`).
 * Older data is still answered: `stale` by the request that starts its refresh, `refreshing` while
 * a refresh runs (DESIGN.md, "Freshness").
 */
export function isFresh(refreshedAt: Date, thresholdSeconds: number, now: Date): boolean {
  return (now.getTime() - refreshedAt.getTime()) / 1000 <= thresholdSeconds;
}

/**
 * The freshness of an answer made of several pieces judged alone: as old as the oldest piece, `stale` if any
 * piece is, else `refreshing` if any is, and a refresh triggered if any piece triggered one. With no piece at
 * all, the answer holds no stored data: `cached` as of `now`.
 */
export function oldestOf(judged: readonly Freshness[], threshold: number, now: Date): Freshness {
  if (!judged.length) return { dataAge: now.toISOString(), source: 'cached', freshnessThreshold: threshold, refreshTriggered: false };
  const oldest = judged.reduce((a, b) => (a.dataAge <= b.dataAge ? a : b));
  const source = judged.some((f) => f.source === 'stale')
    ? 'stale'
    : judged.some((f) => f.source === 'refreshing')
      ? 'refreshing'
      : 'cached';
  return { dataAge: oldest.dataAge, source, freshnessThreshold: threshold, refreshTriggered: judged.some((f) => f.refreshTriggered) };
}
