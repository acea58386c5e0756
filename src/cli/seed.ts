import { type Command, cliLogger, flags, syncProgress, UsageError, withStore } from './command.js';

/** `nyc-listings seed`: adds synthetic listings for benchmarks. */
export const seedCommand: Command = {
  name: 'seed',
  usage: `  seed --listings N [--seed S]   benchmarks only: make the mirror hold N listings, adding synthetic ones
                              derived from the mirrored rows by a seeded rule (docs/data.md); replaces earlier ones`,
  async run(rest, config) {
    const { values } = flags(rest, { listings: { type: 'string' }, seed: { type: 'string', default: '2016' } });
    if (!values.listings || !/^[0-9]{1,8}$/.test(values.listings))
      throw new UsageError('seed needs --listings N (a whole number of listings)');
    if (!/^[0-9]{1,10}$/.test(values.seed!)) throw new UsageError(`--seed must be a whole number, got "${values.seed}"`);
    const logger = await cliLogger(config.logLevel);
    const { seedListings } = await import('../sync/seed.js');
    return withStore(config, async (store) => {
      const result = await seedListings(store, Number(values.listings), Number(values.seed), await syncProgress());
      logger.info(result, `seeded ${result.added} synthetic listings (${result.perSecond} a second); the mirror holds ${result.total}`);
      return 0;
    });
  },
};
