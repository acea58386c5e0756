import { type Command, flags, withStore } from './command.js';

/** `nyc-listings coverage`: prints the share of mirrored records holding each field. */
export const coverageCommand: Command = {
  name: 'coverage',
  usage: `  coverage                    print, per kind and borough, the share of mirrored records (listings, buildings, recorded sales) holding each field
                              of the listing detail and the building (Markdown; read from DATABASE_URL)`,
  async run(rest, config) {
    flags(rest, {});
    const { mirrorCoverage, coverageMarkdown } = await import('../read/mirror-coverage.js');
    return withStore(config, async (store) => {
      process.stdout.write(`${coverageMarkdown(await mirrorCoverage(store, config.sharedDataDir))}\n`);
      return 0;
    });
  },
};
