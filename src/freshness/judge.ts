import type { RefreshCoordinator } from './coordinator.js';
import { isFresh, type Freshness } from './policy.js';

/**
 * Judges stored data refreshed at `refreshedAt` under coordinator `key` (DESIGN.md "Freshness"): `cached`
 * within `threshold` seconds of `now`; older, `refreshing` while any instance refreshes it, else `stale`
 * and `refresh` started in the background, unless `canRefresh` says the source's breaker is open (then
 * `stale` with nothing started). Several requests may get here at once: the coordinator decides which one
 * started the refresh.
 */
export async function judgeFreshness(
  coordinator: RefreshCoordinator,
  now: Date,
  key: string,
  refreshedAt: Date,
  threshold: number,
  canRefresh: () => boolean,
  refresh: () => Promise<unknown>,
): Promise<Freshness> {
  const base = { dataAge: refreshedAt.toISOString(), freshnessThreshold: threshold };
  if (isFresh(refreshedAt, threshold, now)) return { ...base, source: 'cached', refreshTriggered: false };
  if (await coordinator.isRunningAnywhere(key)) return { ...base, source: 'refreshing', refreshTriggered: false };
  if (!canRefresh()) return { ...base, source: 'stale', refreshTriggered: false };
  const outcome = coordinator.trigger(key, refresh);
  return { ...base, source: outcome === 'joined' ? 'refreshing' : 'stale', refreshTriggered: outcome === 'started' };
}
