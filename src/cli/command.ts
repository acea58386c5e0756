import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Store } from '../store/database.js';
import type { SyncProgress } from '../sync/syncer.js';

/**
 * One command of the command line (`nyc-listings <name> ...`). `run` takes the arguments after the name and
 * the configuration read from the environment; it answers the exit code, or -1 for a command that keeps the
 * process running (a server). It loads the modules it runs when it runs (`await import`): help, the version
 * and a usage error answer at once, without loading the HTTP app, GraphQL or the data readers.
 */
export interface Command {
  name: string;
  /** Its lines of the usage text, the first starting with the name. */
  usage: string;
  run(args: string[], config: Config): Promise<number>;
}

/** A mistake in how the command line was used: named on stderr with the usage, exit code 2. */
export class UsageError extends Error {}

/** Parses a command's flags strictly: an unknown flag or a missing value is a {@link UsageError} naming it. */
export function flags<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A port number 1-65535, or a {@link UsageError}. */
export function port(value: string, flag = '--port'): number {
  const n = Number(value);
  if (!/^[0-9]{1,5}$/.test(value) || n < 1 || n > 65535)
    throw new UsageError(`${flag} must be a whole number from 1 to 65535, got "${value}"`);
  return n;
}

/** Human-readable logs on a terminal (pino-pretty), JSON lines otherwise; on stderr. */
export async function cliLogger(level: string): Promise<Logger> {
  const [{ createLogger }, { default: pino }] = await Promise.all([import('../app.js'), import('pino')]);
  if (!process.stderr.isTTY) return createLogger(level, pino.destination(2));
  const { default: pretty } = await import('pino-pretty');
  return createLogger(level, pretty({ destination: 2, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}

/** A progress bar on a terminal for a sync (cli-progress); nothing otherwise (the JSON logs say it). */
export async function syncProgress(): Promise<SyncProgress | undefined> {
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

/** The OpenAPI document, from the app built on an empty in-memory store (nothing synced, nothing listened on). */
export async function apiDocument(config: Config): Promise<{ paths: Record<string, Record<string, { operationId: string }>> }> {
  const logger = await cliLogger(config.logLevel);
  const [{ startRuntime }, { openApiDocument }] = await Promise.all([import('../runtime.js'), import('../http/openapi.js')]);
  const runtime = await startRuntime(
    { ...config, databaseUrl: ':memory:', upstreamUrl: 'http://127.0.0.1:9/' },
    { logger, initialSync: false, scheduler: false, webhooks: false, billing: false },
  );
  try {
    return openApiDocument(runtime.app) as never;
  } finally {
    await runtime.close();
  }
}

/**
 * Runs `work` on the mirror `DATABASE_URL` names (migrated first), and closes it after, whether `work` succeeds or
 * throws. Loads the store's modules when called.
 * @throws Error when the mirror cannot be opened, or what `work` throws.
 */
export async function withStore<T>(config: Config, work: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import('../store/database.js');
  const store = await openStore(config.databaseUrl);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
