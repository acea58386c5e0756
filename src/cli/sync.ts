import { type Command, cliLogger, flags, syncProgress, UsageError } from './command.js';

/** `nyc-listings sync`: syncs the mirror once, or keeps it synced (the worker). */
export const syncCommand: Command = {
  name: 'sync',
  usage: `  sync [--watch] [--source all|listings|open-data]
                              sync every scope once and hydrate the details, then NYC Open Data; with --watch, the
                              worker: keeps syncing on their schedules, records market history, delivers webhooks`,
  async run(rest, config) {
    const { values } = flags(rest, { watch: { type: 'boolean', default: false }, source: { type: 'string', default: 'all' } });
    if (!['all', 'listings', 'open-data'].includes(values.source)) throw new UsageError('--source must be all, listings or open-data');
    const logger = await cliLogger(config.logLevel);
    const { startRuntime } = await import('../runtime.js');
    const runtime = await startRuntime(config, { logger, initialSync: false, scheduler: false, webhooks: values.watch, billing: false });
    const failed: string[] = [];
    if (values.source !== 'open-data') {
      failed.push(...(await runtime.syncer.syncAll({ progress: await syncProgress() })));
      logger.info({ failed, rentals: await runtime.listings.count('rental'), sales: await runtime.listings.count('sale') }, 'sync done');
      await runtime.valuation.run();
      logger.info(runtime.valuation.state(), 'valuation done');
    }
    if (values.source !== 'listings') {
      const openDataFailed = await runtime.openData.syncAll();
      failed.push(...openDataFailed);
      logger.info(
        {
          failed: openDataFailed,
          recordedSales: await runtime.cityRecords.count('recorded_sales'),
          taxLots: await runtime.cityRecords.count('tax_lots'),
        },
        'open data sync done',
      );
    }
    if (!values.watch) {
      await runtime.close();
      return failed.length ? 1 : 0;
    }
    if (values.source !== 'open-data') runtime.scheduler.start();
    if (values.source !== 'listings') runtime.openDataScheduler.start();
    return -1;
  },
};
