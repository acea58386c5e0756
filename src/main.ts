#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Logger } from 'pino';
import { loadConfig, loadEnvFile, PLANS, type Config, type Plan } from './config.js';
import type { SyncProgress } from './sync/syncer.js';
import type { AreasRepository } from './store/areas-repository.js';
import { SERVICE_VERSION } from './version.js';

// Each command loads the modules it runs when it runs (await import): help, the version and a usage
// error answer at once, without loading the HTTP app, GraphQL or the data readers, and
// the key and webhook commands load only the store.

const USAGE = `usage: nyc-listings <command> [options]
  serve [--port N] [--host H] [--api-only]
                              start the API (first sync on an empty database); with --api-only, one of several
                              instances serving what the worker (sync --watch) keeps: no sync, schedule or webhooks
                              of its own, 503 until the worker's first sync (docs/operations.md)
  sync [--watch] [--source all|listings|open-data]
                              sync every scope once and hydrate the details, then NYC Open Data; with --watch, the
                              worker: keeps syncing on their schedules, records market history, delivers webhooks
  keys issue --plan P [--label L] [--expires YYYY-MM-DD] [--origins https://app.example,...] [--operations id,...]
                              print a new key (alone, on stdout); with --origins, a publishable key for web pages;
                              with --operations (operation ids of /v1/openapi.json), a key that may call only those
  keys list                   list keys (never the keys themselves)
  keys revoke <id>            revoke a key
  keys import <file.json|file.csv>   import keys issued by the subscription provider (idempotent)
  webhooks add --key <key id> --url <https url> --events <type,...> [--filter '<query>']
                              subscribe a key to change events; prints the id and signing secret (shown once)
  webhooks list               list subscriptions (never their secrets)
  webhooks remove <id>        remove a subscription (its pending deliveries are given up)
  webhooks deliveries [--subscription <id>] [--status pending|delivered|dead] [--limit N]
                              recent deliveries, newest first (dead letters with --status dead)
  webhooks redeliver <delivery id>   send a delivery again (same webhook-id), from the first step of the schedule
  seed --listings N [--seed S]   benchmarks only: make the mirror hold N listings, adding synthetic ones
                              derived from the mirrored rows by a seeded rule (docs/data.md); replaces earlier ones
  coverage                    print, per kind and borough, the share of mirrored records (listings, buildings, recorded sales) holding each field
                              of the listing detail and the building (Markdown; read from DATABASE_URL)
  mcp [--key K]               the MCP server on stdio, for an AI agent (tools are the API's reads, called with the key
                              given or NYC_LISTINGS_API_KEY; without one, as an anonymous caller)
  upstream [--port N] [--admin-port N] [--open-data-port N]
                              run the local stand-ins alone: the listings site (8090) and NYC Open Data (8091), for
                              UPSTREAM_URL and OPEN_DATA_URL of instances that share them
  openapi                     print the OpenAPI document
  help, --help                this text
  --version                   the version

Configuration comes from the environment (see docs/configuration.md).`;

/** A mistake in how the command line was used: named on stderr with the usage, exit code 2. */
class UsageError extends Error {}

/** Parses a command's flags strictly: an unknown flag or a missing value is a {@link UsageError} naming it. */
function flags<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A port number 1-65535, or a {@link UsageError}. */
function port(value: string, flag = '--port'): number {
  const n = Number(value);
  if (!/^[0-9]{1,5}$/.test(value) || n < 1 || n > 65535)
    throw new UsageError(`${flag} must be a whole number from 1 to 65535, got "${value}"`);
  return n;
}

/** Human-readable logs on a terminal (pino-pretty), JSON lines otherwise; on stderr. */
async function cliLogger(level: string): Promise<Logger> {
  const [{ createLogger }, { default: pino }] = await Promise.all([import('./app.js'), import('pino')]);
  if (!process.stderr.isTTY) return createLogger(level, pino.destination(2));
  const { default: pretty } = await import('pino-pretty');
  return createLogger(level, pretty({ destination: 2, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}

/** A progress bar on a terminal for a sync (cli-progress); nothing otherwise (the JSON logs say it). */
async function syncProgress(): Promise<SyncProgress | undefined> {
  if (!process.stderr.isTTY) return undefined;
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { format: '{step} [{bar}] {value}/{total}', stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let current = '';
  return (step, done, total) => {
    if (step !== current) {
      if (current) bar.stop();
      current = step;
      bar.start(total, done, { step: step.padEnd(9) });
    } else bar.update(done);
    if (done >= total) {
      bar.stop();
      current = '';
    }
  };
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${SERVICE_VERSION}\n`);
    return 0;
  }
  if (!COMMANDS.includes(command)) throw new UsageError(`unknown command "${command}"`);
  loadEnvFile();
  const config = loadConfig();
  switch (command) {
    case 'serve': {
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
      const { startRuntime } = await import('./runtime.js');
      const runtime = await startRuntime(config, { logger, apiOnly });
      // The search index answers from the first request: built later, under load, its build competes with the
      // searches the store answers meanwhile.
      const index = runtime.mirror.searcher.index;
      if (index) {
        await index.current();
        const { listings, buildSeconds } = index.state();
        // The background hydration of a first start writes listings meanwhile: the index is then built again as it goes.
        logger.info(
          { ...listings, buildSeconds },
          `search index of ${listings?.rental ?? 0} rentals and ${listings?.sale ?? 0} sales built in ${buildSeconds} s`,
        );
      }
      const address = await runtime.app.listen(listen);
      const [rentals, sales] = [await runtime.listings.count('rental'), await runtime.listings.count('sale')];
      logger.info(
        { address, docs: `${address}/docs`, explorer: `${address}/explore`, rentals, sales, role: apiOnly ? 'api' : 'all' },
        `nyc-listings${apiOnly ? ' (API only)' : ''} listening on ${address} (docs ${address}/docs, map ${address}/explore): ${rentals} rentals, ${sales} sales`,
      );
      const stop = async () => {
        logger.info('shutting down');
        await runtime.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return -1;
    }
    case 'mcp': {
      const { values } = flags(rest, { key: { type: 'string' } });
      const key = values.key ?? process.env.NYC_LISTINGS_API_KEY;
      // Stdout is the protocol's: every log line goes to stderr.
      const logger = await cliLogger(config.logLevel);
      const [{ startRuntime }, { createMcpServer }, { StdioServerTransport }] = await Promise.all([
        import('./runtime.js'),
        import('./agents/mcp-server.js'),
        import('@modelcontextprotocol/sdk/server/stdio.js'),
      ]);
      const runtime = await startRuntime(config, { logger, webhooks: false });
      const server = createMcpServer(runtime.app, { authorization: key ? `Bearer ${key}` : undefined, remoteAddress: '127.0.0.1' });
      const transport = new StdioServerTransport();
      transport.onclose = () => void runtime.close().then(() => process.exit(0));
      await server.connect(transport);
      process.stdin.once('end', () => void runtime.close().then(() => process.exit(0)));
      logger.info({ tools: 'see tools/list', key: key ? 'given' : 'none (anonymous)' }, 'MCP server on stdio');
      return -1;
    }
    case 'sync': {
      const { values } = flags(rest, { watch: { type: 'boolean', default: false }, source: { type: 'string', default: 'all' } });
      if (!['all', 'listings', 'open-data'].includes(values.source)) throw new UsageError('--source must be all, listings or open-data');
      const logger = await cliLogger(config.logLevel);
      const { startRuntime } = await import('./runtime.js');
      const runtime = await startRuntime(config, { logger, initialSync: false, scheduler: false, webhooks: values.watch });
      const failed: string[] = [];
      if (values.source !== 'open-data') {
        failed.push(...(await runtime.syncer.syncAll({ progress: await syncProgress() })));
        logger.info({ failed, rentals: await runtime.listings.count('rental'), sales: await runtime.listings.count('sale') }, 'sync done');
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
    }
    case 'keys': {
      const [{ openStore }, { KeysRepository }, { issueKey, importKeys, listKeys, parseOrigins }] = await Promise.all([
        import('./store/database.js'),
        import('./store/keys-repository.js'),
        import('./keys/key-admin.js'),
      ]);
      const store = await openStore(config.databaseUrl);
      const keys = new KeysRepository(store.db);
      try {
        const [sub, ...args] = rest;
        if (sub === 'issue') {
          const { values } = flags(args, {
            plan: { type: 'string' },
            label: { type: 'string' },
            expires: { type: 'string' },
            origins: { type: 'string' },
            operations: { type: 'string' },
          });
          if (!values.plan || !PLANS.includes(values.plan as Plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
          let origins: string[] | null = null;
          if (values.origins !== undefined) {
            try {
              origins = parseOrigins(values.origins);
            } catch (error) {
              throw new UsageError(`--origins: ${(error as Error).message}`);
            }
            if (!origins.length) throw new UsageError('--origins needs at least one origin');
          }
          let operations: string[] | null = null;
          if (values.operations !== undefined) {
            operations = [
              ...new Set(
                values.operations
                  .split(',')
                  .map((o) => o.trim())
                  .filter(Boolean),
              ),
            ];
            const known = Object.values((await apiDocument(config)).paths).flatMap((item) =>
              Object.values(item).map((operation) => operation.operationId),
            );
            const unknown = operations.filter((o) => !known.includes(o));
            if (!operations.length || unknown.length)
              throw new UsageError(
                `--operations takes operation ids of /v1/openapi.json${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}: ${known.join(', ')}`,
              );
          }
          process.stdout.write(
            `${await issueKey(keys, config, { plan: values.plan as Plan, label: values.label ?? null, expires: values.expires ?? null, origins, operations })}\n`,
          );
        } else if (sub === 'list') {
          process.stdout.write(`${listKeys(await keys.list())}\n`);
        } else if (sub === 'revoke' && args[0]) {
          if (!(await keys.revoke(args[0], new Date().toISOString()))) throw new Error(`no active key with id ${args[0]}`);
          process.stderr.write(`revoked ${args[0]}\n`);
        } else if (sub === 'import' && args[0]) {
          const result = await importKeys(keys, config, args[0], readFileSync(args[0], 'utf8'));
          process.stderr.write(`imported ${result.inserted} new, ${result.updated} updated\n`);
        } else {
          throw new UsageError(
            sub
              ? `unknown keys command "${sub}" (issue, list, revoke <id>, import <file>)`
              : 'keys needs a command: issue, list, revoke <id>, import <file>',
          );
        }
        return 0;
      } finally {
        await store.close();
      }
    }
    case 'webhooks': {
      const [
        { openStore },
        { WebhooksRepository },
        { KeysRepository },
        { ChangesRepository },
        { AreasRepository },
        { addSubscription, listDeliveries, listSubscriptions, WebhookAdminError },
      ] = await Promise.all([
        import('./store/database.js'),
        import('./store/webhooks-repository.js'),
        import('./store/keys-repository.js'),
        import('./store/changes-repository.js'),
        import('./store/areas-repository.js'),
        import('./notify/webhook-admin.js'),
      ]);
      const store = await openStore(config.databaseUrl);
      const webhooks = new WebhooksRepository(store.db);
      try {
        const [sub, ...args] = rest;
        if (sub === 'add') {
          const { values } = flags(args, {
            key: { type: 'string' },
            url: { type: 'string' },
            events: { type: 'string' },
            filter: { type: 'string', default: '' },
          });
          if (!values.key || !values.url || !values.events) throw new UsageError('webhooks add needs --key, --url and --events');
          const filter = await checkedFilter(values.filter!, new AreasRepository(store.db));
          const deps = {
            webhooks,
            keys: new KeysRepository(store.db),
            changes: new ChangesRepository(store.db),
            config,
            clock: () => new Date(),
          };
          const { subscription, secret } = await addSubscription(deps, {
            keyId: values.key,
            url: values.url,
            events: values.events.split(',').map((e) => e.trim()),
            filter,
          });
          process.stdout.write(
            `${JSON.stringify({ id: subscription.id, secret, url: subscription.url, events: subscription.events.split(','), filter: subscription.filter })}\n`,
          );
          process.stderr.write('the signing secret is shown this once: keep it where the receiver can read it\n');
        } else if (sub === 'list') {
          process.stdout.write(`${listSubscriptions(await webhooks.list())}\n`);
        } else if (sub === 'remove' && args[0]) {
          if (!(await webhooks.remove(args[0], new Date().toISOString())))
            throw new WebhookAdminError(`no active subscription with id ${args[0]}`);
          process.stderr.write(`removed ${args[0]}\n`);
        } else if (sub === 'deliveries') {
          const { values } = flags(args, {
            subscription: { type: 'string' },
            status: { type: 'string' },
            limit: { type: 'string', default: '50' },
          });
          if (values.status && !['pending', 'delivered', 'dead'].includes(values.status))
            throw new UsageError('--status must be pending, delivered or dead');
          if (!/^[0-9]{1,6}$/.test(values.limit!)) throw new UsageError(`--limit must be a whole number, got "${values.limit}"`);
          process.stdout.write(
            `${listDeliveries(await webhooks.deliveries({ subscriptionId: values.subscription, status: values.status, limit: Number(values.limit) }))}\n`,
          );
        } else if (sub === 'redeliver' && args[0]) {
          if (!/^[0-9]{1,15}$/.test(args[0]) || !(await webhooks.redeliver(Number(args[0]), new Date().toISOString()))) {
            throw new WebhookAdminError(`no delivery ${args[0]} of an active subscription (see webhooks deliveries)`);
          }
          process.stderr.write(`delivery ${args[0]} will be sent again\n`);
        } else {
          throw new UsageError(
            sub
              ? `unknown webhooks command "${sub}" (add, list, remove <id>, deliveries, redeliver <id>)`
              : 'webhooks needs a command: add, list, remove <id>, deliveries, redeliver <id>',
          );
        }
        return 0;
      } finally {
        await store.close();
      }
    }
    case 'seed': {
      const { values } = flags(rest, { listings: { type: 'string' }, seed: { type: 'string', default: '2016' } });
      if (!values.listings || !/^[0-9]{1,8}$/.test(values.listings))
        throw new UsageError('seed needs --listings N (a whole number of listings)');
      if (!/^[0-9]{1,10}$/.test(values.seed!)) throw new UsageError(`--seed must be a whole number, got "${values.seed}"`);
      const logger = await cliLogger(config.logLevel);
      const [{ openStore }, { seedListings }] = await Promise.all([import('./store/database.js'), import('./sync/seed.js')]);
      const store = await openStore(config.databaseUrl);
      try {
        const result = await seedListings(store, Number(values.listings), Number(values.seed), await syncProgress());
        logger.info(result, `seeded ${result.added} synthetic listings (${result.perSecond} a second); the mirror holds ${result.total}`);
        return 0;
      } finally {
        await store.close();
      }
    }
    case 'upstream': {
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
        import('./local-site.js'),
        import('./upstream/local-soda/server.js'),
        import('./dataset/city-datasets.js'),
      ]);
      const { upstream } = await startLocalSite(config, { port: ports.upstream, adminPort: ports.admin });
      const soda = await startLocalSoda(cityDatasets(config.sharedDataDir), { port: ports.openData });
      logger.info(
        { url: upstream.url, admin: upstream.adminUrl, openData: soda.url },
        `local upstream on ${upstream.url} (admin ${upstream.adminUrl}), NYC Open Data stand-in on ${soda.url}`,
      );
      return -1;
    }
    case 'coverage': {
      flags(rest, {});
      const [{ openStore }, { mirrorCoverage, coverageMarkdown }] = await Promise.all([
        import('./store/database.js'),
        import('./read/mirror-coverage.js'),
      ]);
      const store = await openStore(config.databaseUrl);
      try {
        process.stdout.write(`${coverageMarkdown(await mirrorCoverage(store, config.sharedDataDir))}\n`);
        return 0;
      } finally {
        await store.close();
      }
    }
    case 'openapi': {
      process.stdout.write(`${JSON.stringify(await apiDocument(config), null, 2)}\n`);
      return 0;
    }
  }
  return 0;
}

/** The OpenAPI document, from the app built on an empty in-memory store (nothing synced, nothing listened on). */
async function apiDocument(config: Config): Promise<{ paths: Record<string, Record<string, { operationId: string }>> }> {
  const logger = await cliLogger(config.logLevel);
  const [{ startRuntime }, { openApiDocument }] = await Promise.all([import('./runtime.js'), import('./app.js')]);
  const runtime = await startRuntime(
    { ...config, databaseUrl: ':memory:', upstreamUrl: 'http://127.0.0.1:9/' },
    { logger, initialSync: false, scheduler: false, webhooks: false },
  );
  try {
    return openApiDocument(runtime.app) as never;
  } finally {
    await runtime.close();
  }
}

const COMMANDS = ['serve', 'sync', 'keys', 'webhooks', 'seed', 'coverage', 'mcp', 'upstream', 'openapi'];

/**
 * A webhook subscription's `--filter`, checked as GET /v1/changes checks its query (the same schema and
 * strict conversion), with its area ids known to the mirror. Returns it as given.
 * @throws UsageError naming each bad parameter.
 */
async function checkedFilter(filter: string, areas: AreasRepository): Promise<string> {
  const [{ parameterValidatorCompiler }, { ChangeFilterQuery }] = await Promise.all([
    import('./http/validation.js'),
    import('./http/schemas/change-query.js'),
  ]);
  const validate = parameterValidatorCompiler()({
    schema: ChangeFilterQuery as never,
    httpPart: 'querystring',
    method: 'GET',
    url: '/v1/changes',
  });
  const params = Object.fromEntries(new URLSearchParams(filter));
  const result = validate(params) as { error?: { instancePath: string; message: string; params?: { additionalProperty?: string } }[] };
  if (result.error) {
    const named = result.error.map((e) =>
      e.params?.additionalProperty ? `unknown parameter ${e.params.additionalProperty}` : `${e.instancePath.slice(1)} ${e.message}`,
    );
    throw new UsageError(`--filter: ${named.join('; ')}`);
  }
  const tree = await areas.tree();
  const unknown = (params.areas?.split(',') ?? []).filter((id) => !tree.get(Number(id)));
  if (unknown.length) throw new UsageError(`--filter: unknown area id ${unknown.join(', ')}`);
  return filter;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: Error) => {
    if (error instanceof UsageError) {
      process.stderr.write(`nyc-listings: ${error.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`nyc-listings: ${error.message}\n`);
    process.exit(1);
  },
);
