import type { Logger } from 'pino';
import type { RefreshCoordinator } from '../freshness/coordinator.js';
import { AREAS_SCOPE, scopeKey } from '../store/scopes-repository.js';
import type { HydrationJob } from './hydration-job.js';
import { LISTING_SCOPES, type Syncer } from './syncer.js';

/** Where a first sync run in the background is: scopes synced and failed of all, and whether it is over. */
export interface FirstSyncState {
  scopes: number;
  synced: number;
  failed: string[];
  done: boolean;
}

/**
 * The first sync of an empty mirror, in the background while the service answers (issue 67): the area list, then
 * every listing scope (sales first: they are the smallest), each under the refresh coordinator with its scope's key,
 * so that a search of a scope not yet synced is answered at once with what the mirror holds and `source: refreshing`,
 * and one already synced as any other; then the details are hydrated in the background, as after any sync. A scope
 * that fails is logged and left to the next refresh a request or the scheduler starts.
 */
export class FirstSync {
  private readonly progress: FirstSyncState = { scopes: LISTING_SCOPES.length, synced: 0, failed: [], done: false };
  /** Resolves when every scope was tried (never rejects). */
  readonly done: Promise<void>;

  constructor(private readonly deps: { syncer: Syncer; coordinator: RefreshCoordinator; hydration: HydrationJob; logger: Logger }) {
    this.done = this.run();
  }

  state(): FirstSyncState {
    return { ...this.progress, failed: [...this.progress.failed] };
  }

  private async run(): Promise<void> {
    const { syncer, coordinator, hydration, logger } = this.deps;
    const started = Date.now();
    coordinator.trigger(AREAS_SCOPE, () => syncer.syncAreas());
    await coordinator.wait(AREAS_SCOPE);
    // Every scope queued now: each is `refreshing` to a search until its turn has come and gone.
    for (const { kind, boroughId } of LISTING_SCOPES) {
      const key = scopeKey(kind, boroughId);
      coordinator.trigger(key, async () => {
        try {
          await syncer.syncScope(kind, boroughId, { hydrate: false });
          this.progress.synced++;
        } catch (error) {
          this.progress.failed.push(key);
          throw error;
        }
      });
    }
    for (const { kind, boroughId } of LISTING_SCOPES) await coordinator.wait(scopeKey(kind, boroughId));
    this.progress.done = true;
    logger.info({ ms: Date.now() - started, failed: this.progress.failed }, 'first sync done: every scope answers from the mirror');
    // The job reads its backlog itself and, the store failing, tries again later: nothing here can reject.
    hydration.resume();
  }
}
