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
 * The freshness rule of DESIGN.md for stored data refreshed at `refreshedAt`:
 * within the threshold: `cached`; older and no refresh running: `stale`, and this request starts one;
 * older with a refresh already running: `refreshing`.
 */
export function judge(refreshedAt: Date, thresholdSeconds: number, now: Date, refreshRunning: boolean): { source: Source; startRefresh: boolean } {
  const ageSeconds = (now.getTime() - refreshedAt.getTime()) / 1000;
  if (ageSeconds <= thresholdSeconds) return { source: 'cached', startRefresh: false };
  if (refreshRunning) return { source: 'refreshing', startRefresh: false };
  return { source: 'stale', startRefresh: true };
}
