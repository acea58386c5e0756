import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { buildInventory } from '../../src/dataset/build-inventory.js';
import { startRuntime } from '../../src/runtime.js';
import { CACHE, INVENTORY_FILE, ROOT, SHARED_DATA, TEMPLATE_DB } from './paths.js';

/**
 * Once per test run: builds the local upstream's inventory from the real data and syncs it into a
 * template SQLite database through the real client and local upstream. Each test file copies both.
 * Meanwhile, on the other core, compiles the command line the tests run (`CLI`), as `npm start` does.
 */
export default async function setup(): Promise<void> {
  const build = promisify(execFile)(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT });
  rmSync(CACHE, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  const inventory = buildInventory(SHARED_DATA, new Date());
  writeFileSync(INVENTORY_FILE, JSON.stringify(inventory));
  const config = loadConfig({ DATABASE_URL: TEMPLATE_DB, SHARED_DATA_DIR: SHARED_DATA, SYNC_INTERVAL_SECONDS: '0', LOG_LEVEL: 'silent', MARKET_CLOCK: 'off' });
  const runtime = await startRuntime(config, { inventory, logger: pino({ level: 'silent' }), scheduler: false });
  // The template is fully hydrated: wait for the background hydration the first sync started.
  await runtime.coordinator.idle();
  await runtime.close();
  await build;
}
