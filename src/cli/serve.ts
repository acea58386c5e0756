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
        'serve --api-only starts no local stand-in: set UPSTREAM_URL and OPEN_DATA_URL to the sources the worker syncs from (nyc-listings upstream runs local ones; docs/operations.md)',
      );
    }
    const logger = await cliLogger(config.logLevel);
    const { startRuntime } = await import('../runtime.js');
    const runtime = await startRuntime(config, { logger, apiOnly });
    // The search index answers from the first request: built later, under load, its build competes with the
    // searches the store answers meanwhile.
    const index = runtime.reads.searcher.index;
    if (index) {
      await index.current();
      const { listings, buildSeconds } = index.state();
      // The background hydration of a first start writes listings meanwhile: the index is then built again as it goes.
      logger.info(
        { ...listings, buildSeconds },
        `search index of ${listings?.rental ?? 0} rentals and ${listings?.sale ?? 0} sales built in ${buildSeconds} s`,
      );
    }
    // So are the estimates' comparables: a listing's detail carries its estimate, and the first would wait for them.
    const estimator = runtime.reads.estimator;
    for (const kind of ['rental', 'sale'] as const) await estimator.model(kind).catch(() => undefined);
    logger.info({ estimates: estimator.state().kinds }, 'estimates: comparables read and the interval calibrated');
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
