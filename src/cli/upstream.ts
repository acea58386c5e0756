import { type Command, cliLogger, flags, port } from './command.js';

/** `nyc-listings upstream`: runs the local emulators alone. */
export const upstreamCommand: Command = {
  name: 'upstream',
  usage: `  upstream [--port N] [--admin-port N] [--open-data-port N]
                              run the local emulators alone: the listings site (8090) and NYC Open Data (8091), for
                              UPSTREAM_URL and OPEN_DATA_URL of instances that share them`,
  async run(rest, config) {
    const { values } = flags(rest, {
      port: { type: 'string', default: '8090' },
      'admin-port': { type: 'string' },
      'open-data-port': { type: 'string', default: '8091' },
    });
    const ports = {
      upstream: port(values.port!),
      admin: values['admin-port'] === undefined ? config.localUpstreamAdminPort : port(values['admin-port'], '--admin-port'),
      openData: port(values['open-data-port']!, '--open-data-port'),
    };
    const logger = await cliLogger(config.logLevel);
    const [{ startLocalSite }, { startLocalSoda }, { cityDatasets }] = await Promise.all([
      import('../local-site.js'),
      import('../upstream/local-soda/server.js'),
      import('../dataset/city-datasets.js'),
    ]);
    const { upstream } = await startLocalSite(config, { port: ports.upstream, adminPort: ports.admin });
    const soda = await startLocalSoda(cityDatasets(config.sharedDataDir), { port: ports.openData });
    logger.info(
      { url: upstream.url, admin: upstream.adminUrl, openData: soda.url },
      `local upstream on ${upstream.url} (admin ${upstream.adminUrl}), NYC Open Data emulator on ${soda.url}`,
    );
    return -1;
  },
};
