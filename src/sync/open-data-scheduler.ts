import type { Logger } from 'pino';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import type { ScopesRepository } from '../store/scopes-repository.js';
import { IntervalScheduler } from './interval-scheduler.js';
import { OPEN_DATA_KEY, RECORDED_SALES_SCOPE, TAX_LOTS_SCOPE } from '../store/scopes-repository.js';
import type { OpenDataSyncer } from './open-data-syncer.js';

/**
 * Runs the incremental sync of NYC Open Data on its own schedule, apart from the listings site's: every
 * `intervalSeconds` from its datasets' oldest last success, through the refresh coordinator (one sync at
 * a time on every instance), unless SODA's breaker refuses calls. Checks once an hour at most.
 */
export class OpenDataScheduler extends IntervalScheduler {
  constructor(
    private readonly deps: {
      syncer: OpenDataSyncer;
      scopes: ScopesRepository;
      coordinator: RefreshCoordinator;
      clock: () => Date;
      logger: Logger;
    },
    intervalSeconds: number,
  ) {
    super(intervalSeconds, 3600, deps.clock, deps.logger, 'open data');
  }

  /** Starts a sync when either dataset is due. */
  async tick(): Promise<void> {
    if (!this.deps.syncer.canRefresh()) return;
    const now = this.deps.clock().getTime();
    const due = await Promise.all(
      [TAX_LOTS_SCOPE, RECORDED_SALES_SCOPE].map(async (scope) => {
        const last = (await this.deps.scopes.get(scope))?.last_success_at;
        return !last || now - Date.parse(last) >= this.intervalSeconds * 1000;
      }),
    );
    if (due.some(Boolean)) this.deps.coordinator.trigger(OPEN_DATA_KEY, () => this.deps.syncer.syncAll());
  }
}
