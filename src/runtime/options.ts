import type { SodaRow } from '../domain/city-records.js';
import type { SiteData } from '../upstream/local/site-data.js';
import type { LocalStripeOptions } from '../upstream/local-stripe/server.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';

/** How `startRuntime` assembles the service: what tests, the command line and the worker change from the defaults. */
export interface RuntimeOptions {
  /** The service's clock (UTC); tests move it. */
  clock?: () => Date;
  logger?: Logger;
  /** The site data the local upstream serves (built from ../shared/data when not given). */
  siteData?: SiteData;
  /**
   * What the local SODA emulator serves, by dataset id, each read when first asked for (by default the city's files
   * under SHARED_DATA_DIR, `cityDatasets`; the tests hand each runtime copies of rows they read once).
   */
  openDataRows?: Record<string, () => Promise<SodaRow[]>>;
  /** A manual market clock (tests): starts at the service clock's time and moves only when advanced. */
  manualMarketClock?: boolean;
  /**
   * Run the first full sync when the store has no listings (default true): before returning, or with `background` after
   * it (`Runtime.firstSync`), each scope answering `refreshing` until its turn (sync/first-sync.ts).
   */
  initialSync?: boolean | 'background';
  /** Sync NYC Open Data in the background when the store holds no recorded sales (default: as `initialSync`). */
  initialOpenDataSync?: boolean;
  /** Start the periodic scheduler (default: when `config.syncIntervalSeconds > 0`). */
  scheduler?: boolean;
  /** Deliver webhooks from this process (default true; one-shot commands turn it off). */
  webhooks?: boolean;
  /** Sell plans through Stripe (default true; the one-shot commands and the worker, which serve no pages, turn it off). */
  billing?: boolean;
  /** The local Stripe emulator's options (tests: quick retries of its event deliveries, the portal's cancellation). */
  localStripe?: Partial<LocalStripeOptions>;
  /** Keep the text of every query the local upstream answers in `upstream.queries` (tests; default off). */
  recordUpstreamQueries?: boolean;
  /**
   * An API-only instance (`serve --api-only`): it serves the mirror a worker (`sync --watch`) keeps. No first
   * sync, no hydration, no schedules, no webhook deliveries; refreshes a request starts go to `UPSTREAM_URL`
   * and `OPEN_DATA_URL`, which must be set (no local emulator is started), under the shared Redis lock; every
   * non-public route answers 503 UNAVAILABLE until the mirror holds a listing.
   * @throws Error when `UPSTREAM_URL` or `OPEN_DATA_URL` is unset.
   */
  apiOnly?: boolean;
  /**
   * `serve` (BACKGROUND_THREAD): the syncs, the schedules, hydration, the valuation and the webhook deliveries run in
   * a thread of their own (runtime/background-worker.ts), which also starts the local emulators; this thread answers
   * requests, its refreshes done by that thread.
   */
  backgroundThread?: boolean;
  /** The runtime of that background thread: no metrics port, no process metrics of its own, only its jobs observed. */
  inBackgroundThread?: boolean;
}

/**
 * The options of an API-only instance (`options.apiOnly`): no first sync, schedule or webhook delivery; the others as
 * given. @throws Error when `UPSTREAM_URL` or `OPEN_DATA_URL` is unset (it starts no local emulator)
 */
export function asApiOnly(config: Config, options: RuntimeOptions): RuntimeOptions {
  if (!options.apiOnly) return options;
  if (!config.upstreamUrl || !config.openData.url) {
    throw new Error(
      'an API-only instance starts no local emulator: set UPSTREAM_URL and OPEN_DATA_URL to the sources the worker syncs from (docs/operations.md)',
    );
  }
  return { ...options, initialSync: false, initialOpenDataSync: false, scheduler: false, webhooks: false };
}
