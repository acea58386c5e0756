import type { ScopesRepository } from '../store/scopes-repository.js';
import { ReadMemo } from '../lib/read-memo.js';
import type { RefreshCoordinator } from './coordinator.js';
import { judgeFreshness } from './judge.js';
import { oldestOf, type Freshness } from './policy.js';

export interface ScopeFreshnessDeps {
  /** The scopes' sync states: all of them, and this process's write count of them. */
  scopes: Pick<ScopesRepository, 'writeCount' | 'all'>;
  coordinator: RefreshCoordinator;
  /** Longest the sync states are kept in memory (`READ_CACHE_SECONDS`): how long another instance's sync may take to show. */
  readCacheSeconds: number;
  clock: () => Date;
}

/** One scope to judge: its key in the store, the coordinator key its refresh runs under (the scope's own when none), and the refresh. */
export interface JudgedScope {
  scope: string;
  refreshKey?: string;
  refresh: () => Promise<unknown>;
}

const NEVER = new Date(0);

/**
 * Freshness of data synced by scope (listings by kind and borough, the area list, open data): judged by each
 * scope's last successful sync, a stale one refreshed in the background ({@link judgeFreshness}). The sync
 * states are read once for every reader (listings and city records alike) and kept while this process wrote
 * none, for at most `readCacheSeconds`.
 */
export class ScopeFreshness {
  private readonly states: ReadMemo<Map<string, string | null>>;

  constructor(private readonly deps: ScopeFreshnessDeps) {
    this.states = new ReadMemo(
      deps.readCacheSeconds,
      () => deps.scopes.writeCount,
      async () => new Map((await deps.scopes.all()).map((s) => [s.scope, s.last_success_at])),
    );
  }

  /**
   * The freshness of data covering `scopes`, within `threshold` seconds: the oldest scope's ({@link oldestOf}).
   * `canRefresh` false (the source's breaker is open) starts no refresh. A scope never synced is as old as 1970.
   */
  async judge(scopes: readonly JudgedScope[], threshold: number, canRefresh: () => boolean): Promise<Freshness> {
    const states = await this.states.get();
    const now = this.deps.clock();
    const each = await Promise.all(
      scopes.map((s) => {
        const at = states.get(s.scope);
        return judgeFreshness(
          this.deps.coordinator,
          now,
          s.refreshKey ?? s.scope,
          at ? new Date(at) : NEVER,
          threshold,
          canRefresh,
          s.refresh,
        );
      }),
    );
    return oldestOf(each, threshold, now);
  }
}
