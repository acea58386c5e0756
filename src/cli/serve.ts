import type { Logger } from 'pino';
import type { Runtime } from '../runtime.js';
import { type Command, cliLogger, flags, port, UsageError } from './command.js';

/** `nyc-listings serve`: starts the API. */
export const serveCommand: Command = {
  name: 'serve',
  usage: `  serve [--port N] [--host H] [--api-only]
                              start the API (first sync on an empty database); with --api-only, one of several
                              instances serving what the worker (sync --watch) keeps: no sync, schedule or webhooks
                              of its own, 503 until the worker's first sync (docs/operations.md)`,
  async run(rest, config) {
    const { values } = flags(rest, {
      port: { type: 'string' },
      host: { type: 'string' },
      'api-only': { type: 'boolean', default: false },
    });
    const listen = { port: values.port === undefined ? config.port : port(values.port), host: values.host ?? config.host };
    const apiOnly = values['api-only'];
    if (apiOnly && (!config.upstreamUrl || !config.openData.url)) {
      throw new UsageError(
        'serve --api-only starts no local emulator: set UPSTREAM_URL and OPEN_DATA_URL to the sources the worker syncs from (nyc-listings upstream runs local ones; docs/operations.md)',
      );
    }
    const logger = await cliLogger(config.logLevel);
    const { startRuntime } = await import('../runtime.js');
    // An empty mirror is synced in the background: the service answers from the first seconds (issue 67). The syncs and
    // the other jobs run in a thread of their own unless BACKGROUND_THREAD is off.
    const runtime = await startRuntime(config, {
      logger,
      apiOnly,
      initialSync: apiOnly ? false : 'background',
      backgroundThread: !apiOnly && config.backgroundThread,
    });
    const address = await runtime.app.listen(listen);
    // The local Stripe emulator sends its events here, as `stripe listen --forward-to` would.
    runtime.stripe?.forwardTo(`${address}/billing/stripe/webhook`);
    const [rentals, sales] = [await runtime.listings.count('rental'), await runtime.listings.count('sale')];
    logger.info(
      {
        address,
        docs: `${address}/docs`,
        explorer: `${address}/explore`,
        pricing: runtime.billing ? `${address}/pricing` : null,
        rentals,
        sales,
        role: apiOnly ? 'api' : 'all',
      },
      `nyc-listings${apiOnly ? ' (API only)' : ''} listening on ${address} (docs ${address}/docs, map ${address}/explore${runtime.billing ? `, plans ${address}/pricing` : ''}): ${rentals} rentals, ${sales} sales`,
    );
    // The search index and the estimates' comparables are built in the background too: the store answers searches
    // meanwhile (its SQL path), and a listing's detail waits only for its own estimate's comparables.
    void warmUp(runtime, logger).catch((error: Error) => logger.warn({ err: error.message }, 'warm-up failed: the store answers searches'));
    if (runtime.firstSync || runtime.background?.state().firstSync) reportFirstStart(runtime, logger);
    const stop = async () => {
      logger.info('shutting down');
      await runtime.close();
      const { stopTracing } = await import('../telemetry/tracing.js');
      await stopTracing();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1;
  },
};

/** Builds the search index and reads the estimates' comparables, logging each when done (failures are their own to log). */
async function warmUp(runtime: Runtime, logger: Logger): Promise<void> {
  await (runtime.background ? runtime.background.firstSyncDone() : runtime.firstSync?.done);
  const index = runtime.reads.searcher.index;
  if (index) {
    await index.current().catch(() => undefined);
    const { listings, buildSeconds } = index.state();
    logger.info(
      { ...listings, buildSeconds },
      `search index of ${listings?.rental ?? 0} rentals and ${listings?.sale ?? 0} sales built in ${buildSeconds} s`,
    );
  }
  const estimator = runtime.reads.estimator;
  for (const kind of ['rental', 'sale'] as const) await estimator.model(kind).catch(() => undefined);
  logger.info({ estimates: estimator.state().kinds }, 'estimates: comparables read and the interval calibrated');
}

/**
 * On a first start, a line every 5 s a person can read: the scopes synced, the listings in the mirror, their details
 * hydrated, the search index; the last once all is in.
 */
function reportFirstStart(runtime: Runtime, logger: Logger): void {
  const timer = setInterval(async () => {
    // The first sync and hydration run in the background thread when there is one: their state is the one it reported.
    const sync = runtime.background?.state().firstSync ?? runtime.firstSync!.state();
    // The store unreachable for a moment (a restart): the line waits for the next tick.
    const counts = await Promise.all([runtime.listings.count(), runtime.syncer.backlog()]).catch(() => null);
    if (!counts) return;
    const [listings, backlog] = counts;
    const hydration = runtime.background?.state().hydration ?? runtime.syncer.hydrationProgress();
    const index = runtime.reads.searcher.index?.state();
    const indexed = index
      ? index.building || !index.listings
        ? 'building'
        : `${(index.listings.rental ?? 0) + (index.listings.sale ?? 0)} listings`
      : 'off';
    const done = sync.done && backlog === 0 && !hydration.running && index?.building !== true;
    logger.info(
      { scopesSynced: sync.synced, scopes: sync.scopes, failed: sync.failed, listings, detailsWaiting: backlog, searchIndex: indexed },
      `first start: ${sync.synced} of ${sync.scopes} scopes synced, ${listings} listings; ${backlog} waiting for their details; search index: ${indexed}${done ? '; all in' : ''}`,
    );
    if (done) clearInterval(timer);
  }, 5000);
  timer.unref();
}
