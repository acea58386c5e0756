#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { createLogger } from './app.js';
import { loadConfig, PLANS, type Plan } from './config.js';
import { buildInventory } from './dataset/build-inventory.js';
import { issueKey, importKeys, listKeys } from './keys/key-admin.js';
import { startRuntime } from './runtime.js';
import { KeysRepository } from './store/keys-repository.js';
import { openStore } from './store/database.js';
import { LocalMarket } from './upstream/local/market.js';
import { MarketClock } from './upstream/local/market-clock.js';
import { parseFaults, startLocalUpstream } from './upstream/local/server.js';

const USAGE = `usage: nyc-listings <command>
  serve                       start the API (first sync on an empty database)
  sync [--watch]              sync every scope once (or keep syncing every SYNC_INTERVAL_SECONDS)
  keys issue --plan P [--label L] [--expires YYYY-MM-DD]   print a new key (alone, on stdout)
  keys list                   list keys (never the keys themselves)
  keys revoke <id>            revoke a key
  keys import <file.json|file.csv>   import keys issued by the subscription provider (idempotent)
  upstream [--port N]         run the local upstream alone
  openapi                     print the OpenAPI document`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  const logger = createLogger(config.logLevel, pino.destination(2));
  switch (command) {
    case 'serve': {
      const runtime = await startRuntime(config, { logger });
      const address = await runtime.app.listen({ port: config.port, host: config.host });
      logger.info({ address, docs: `${address}/docs` }, 'nyc-listings listening');
      const stop = async () => {
        logger.info('shutting down');
        await runtime.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return -1;
    }
    case 'sync': {
      const { values } = parseArgs({ args: rest, options: { watch: { type: 'boolean', default: false } } });
      const runtime = await startRuntime(config, { logger, initialSync: false, scheduler: false });
      const failed = await runtime.syncer.syncAll();
      logger.info({ failed, rentals: await runtime.listings.count('rental'), sales: await runtime.listings.count('sale') }, 'sync done');
      if (!values.watch) {
        await runtime.close();
        return failed.length ? 1 : 0;
      }
      runtime.scheduler.start();
      return -1;
    }
    case 'keys': {
      const store = await openStore(config.databaseUrl);
      const keys = new KeysRepository(store.db);
      try {
        const [sub, ...args] = rest;
        if (sub === 'issue') {
          const { values } = parseArgs({ args, options: { plan: { type: 'string' }, label: { type: 'string' }, expires: { type: 'string' } } });
          if (!values.plan || !PLANS.includes(values.plan as Plan)) throw new Error(`--plan must be one of ${PLANS.join(', ')}`);
          process.stdout.write(`${await issueKey(keys, config, { plan: values.plan as Plan, label: values.label ?? null, expires: values.expires ?? null })}\n`);
        } else if (sub === 'list') {
          process.stdout.write(`${listKeys(await keys.list())}\n`);
        } else if (sub === 'revoke' && args[0]) {
          if (!(await keys.revoke(args[0], new Date().toISOString()))) throw new Error(`no active key with id ${args[0]}`);
          process.stderr.write(`revoked ${args[0]}\n`);
        } else if (sub === 'import' && args[0]) {
          const result = await importKeys(keys, config, args[0], readFileSync(args[0], 'utf8'));
          process.stderr.write(`imported ${result.inserted} new, ${result.updated} updated\n`);
        } else {
          process.stderr.write(`${USAGE}\n`);
          return 2;
        }
        return 0;
      } finally {
        await store.close();
      }
    }
    case 'upstream': {
      const { values } = parseArgs({ args: rest, options: { port: { type: 'string', default: '8090' } } });
      const market = new LocalMarket(buildInventory(config.sharedDataDir));
      const clock = config.marketClock ? new MarketClock(market, { seed: config.marketSeed, start: new Date(), realTime: true }) : null;
      const upstream = await startLocalUpstream(market, {
        port: Number(values.port),
        faults: parseFaults(config.localUpstreamFaults),
        beforeRequest: clock ? () => clock.catchUp() : undefined,
      });
      logger.info({ url: upstream.url, admin: upstream.adminUrl }, 'local upstream listening');
      return -1;
    }
    case 'openapi': {
      const runtime = await startRuntime({ ...config, databaseUrl: ':memory:', upstreamUrl: 'http://127.0.0.1:9/' }, { logger, initialSync: false, scheduler: false });
      process.stdout.write(`${JSON.stringify(runtime.app.swagger(), null, 2)}\n`);
      await runtime.close();
      return 0;
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      return command ? 2 : 0;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: Error) => {
    process.stderr.write(`nyc-listings: ${error.message}\n`);
    process.exit(1);
  },
);
