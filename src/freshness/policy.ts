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
