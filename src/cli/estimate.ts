import { LISTING_KINDS, type ListingKind } from '../domain/listing.js';
import type { Config } from '../config.js';
import { cliLogger, type Command, flags, UsageError, withStore } from './command.js';

/**
 * `nyc-listings estimate backtest`: the estimates' error measured on held-out listings of the mirror, beside two
 * baselines. `nyc-listings estimate value`: stores every active listing's price position, as after a sync.
 */
export const estimateCommand: Command = {
  name: 'estimate',
  usage: `  estimate value              value every active listing of the mirror and store its price position (what searches'
                              maxPricePosition reads), as the service does after each sync; prints the run's figures
  estimate backtest [--seed N] [--sample N] [--kind rental|sale|recorded-sale] [--json]
                              estimate held-out active listings of the mirror (DATABASE_URL) without themselves and print, per kind
                              and borough, the median absolute percentage error, the shares within 5, 10 and 20 %, the 80 %
                              interval's coverage, and the same for two baselines (docs/estimates.md); the seed (default 1)
                              draws the calibration and held-out properties, --sample (default 3000) how many are held out a kind;
                              recorded sales (when the mirror holds them) month by month from the sales before each month`,
  async run(rest, config) {
    const [sub, ...more] = rest;
    if (sub === 'value') return valueListings(more, config);
    if (sub !== 'backtest') throw new UsageError(`estimate: unknown subcommand "${sub ?? ''}" (known: value, backtest)`);
    const { values } = flags(more, {
      seed: { type: 'string', default: '1' },
      sample: { type: 'string', default: '3000' },
      kind: { type: 'string' },
      json: { type: 'boolean', default: false },
    });
    const seed = Number(values.seed);
    const sample = Number(values.sample);
    if (!/^[0-9]{1,9}$/.test(values.seed)) throw new UsageError(`--seed must be a whole number, got "${values.seed}"`);
    if (!/^[0-9]{1,7}$/.test(values.sample) || sample < 1)
      throw new UsageError(`--sample must be a whole number from 1, got "${values.sample}"`);
    if (values.kind !== undefined && ![...LISTING_KINDS, 'recorded-sale'].includes(values.kind))
      throw new UsageError(`--kind must be rental, sale or recorded-sale, got "${values.kind}"`);
    const kinds = values.kind ? [values.kind] : [...LISTING_KINDS, 'recorded-sale'];
    const [{ backtest, backtestMarkdown }, { readPool }, { readRecordedSales, recordedSalesBacktest }] = await Promise.all([
      import('../estimate/backtest.js'),
      import('../estimate/pool-reader.js'),
      import('../estimate/recorded-sales-backtest.js'),
    ]);
    return withStore(config, async (store) => {
      const rows = [];
      for (const kind of kinds) {
        if (kind === 'recorded-sale') rows.push(...recordedSalesBacktest(await readRecordedSales(store.db)));
        else rows.push(...backtest(await readPool(store.db, kind as ListingKind), { seed, sample }));
      }
      process.stdout.write(values.json ? `${JSON.stringify(rows, null, 2)}\n` : `${backtestMarkdown(rows)}\n`);
      return 0;
    });
  },
};

/** `estimate value`: one valuation of the mirror (DATABASE_URL); exit 1 when a kind was given up. */
async function valueListings(rest: string[], config: Config): Promise<number> {
  flags(rest, {});
  const [{ Estimator }, { Valuation }, { ListingsRepository }] = await Promise.all([
    import('../estimate/estimator.js'),
    import('../estimate/valuation.js'),
    import('../store/listings-repository.js'),
  ]);
  const logger = await cliLogger(config.logLevel);
  const warn = (message: string, error: unknown) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, message);
  return withStore(config, async (store) => {
    const listings = new ListingsRepository(store.db);
    const clock = () => new Date();
    const estimator = new Estimator({
      ...{ db: store.readDb, listings, readCacheSeconds: config.readCacheSeconds, refreshSeconds: config.estimateRefreshSeconds },
      ...{ clock, warn },
    });
    const valuation = new Valuation({ db: store.readDb, listings, estimator, enabled: true, warn, clock });
    await valuation.run();
    const state = valuation.state();
    process.stdout.write(`${JSON.stringify({ valued: state.lastValued, changed: state.lastChanged, seconds: state.lastRunSeconds })}\n`);
    return state.failedRuns ? 1 : 0;
  });
}
