import type { Logger } from 'pino';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import { scopeKey, type ScopesRepository } from '../store/scopes-repository.js';
import { IntervalScheduler } from './interval-scheduler.js';
import { LISTING_SCOPES, type Syncer } from './syncer.js';
import type { HydrationJob } from './hydration-job.js';

/**
 * Refreshes every listing scope every `intervalSeconds` (measured from its last success), through the
 * refresh coordinator so a scheduled crawl and a request-triggered one never run together, and
 * resumes the background hydration whenever a backlog waits (unless it is waiting out a backoff). Checks
 * once a minute at most. `intervalSeconds = 0` never starts it.
 */
export class SyncScheduler extends IntervalScheduler {
  constructor(
    private readonly deps: {
      syncer: Syncer;
      hydration: HydrationJob;
      scopes: ScopesRepository;
      coordinator: RefreshCoordinator;
      clock: () => Date;
      logger: Logger;
    },
    intervalSeconds: number,
  ) {
    super(intervalSeconds, 60, deps.clock, deps.logger, 'scheduler');
  }

  /** Starts a refresh of every scope that is due, unless the upstream's breaker refuses calls. */
  async tick(): Promise<void> {
    if (!this.deps.syncer.canRefresh()) return;
    const states = new Map((await this.deps.scopes.all()).map((s) => [s.scope, s]));
    const now = this.deps.clock().getTime();
    for (const { kind, boroughId } of LISTING_SCOPES) {
      const key = scopeKey(kind, boroughId);
      const last = states.get(key)?.last_success_at;
      if (last && now - Date.parse(last) < this.intervalSeconds * 1000) continue;
      this.deps.coordinator.trigger(key, () => this.deps.syncer.syncScope(kind, boroughId));
    }
    if ((await this.deps.syncer.backlog()) > 0) this.deps.hydration.resume();
  }
}
