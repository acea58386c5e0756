import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { buildInventory } from '../../src/dataset/build-inventory.js';
import { startRuntime } from '../../src/runtime.js';
import type { Inventory } from '../../src/upstream/local/inventory.js';
import { CACHE, INVENTORY_FILE, INVENTORY_WITHOUT_RENTHOP_FILE, ROOT, SHARED_DATA, TEMPLATE_DB, TEMPLATE_WITHOUT_RENTHOP_DB } from './paths.js';

/**
 * Once per test run: builds the local upstream's inventory from the real data and syncs it into a
 * template SQLite database through the real client and local upstream; the same for the inventory
 * without the RentHop rentals. Each test file copies one inventory and its template.
 * Meanwhile, on the other core, compiles the command line the tests run (`CLI`), as `npm start` does.
 */
export default async function setup(): Promise<void> {
  const build = promisify(execFile)(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT });
  rmSync(CACHE, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  const inventory = buildInventory(SHARED_DATA, new Date());
  writeFileSync(INVENTORY_FILE, JSON.stringify(inventory));
  await syncTemplate(TEMPLATE_DB, inventory);
  const withoutRentHop = inventoryWithoutRentHop(inventory);
  writeFileSync(INVENTORY_WITHOUT_RENTHOP_FILE, JSON.stringify(withoutRentHop));
  await syncTemplate(TEMPLATE_WITHOUT_RENTHOP_DB, withoutRentHop);
  await build;
}

/** Syncs `inventory` into a new SQLite database at `file` through the real client and local upstream, fully hydrated. */
async function syncTemplate(file: string, inventory: Inventory): Promise<void> {
  const config = loadConfig({ DATABASE_URL: file, SHARED_DATA_DIR: SHARED_DATA, SYNC_INTERVAL_SECONDS: '0', LOG_LEVEL: 'silent', MARKET_CLOCK: 'off' });
  const runtime = await startRuntime(config, { inventory, logger: pino({ level: 'silent' }), scheduler: false });
  // The template is fully hydrated: wait for the background hydration the first sync started.
  await runtime.coordinator.idle();
  await runtime.close();
}

/**
 * The inventory less the RentHop rentals (listing ids 7,000,000 to 7,999,999, docs/data.md): the StreetEasy
 * rentals and every sale, about 9,600 listings, for the tests of mechanics (freshness, limits, webhooks,
 * crashes, PostgreSQL) that sync again and again and look at no figure of the whole city.
 */
function inventoryWithoutRentHop(inventory: Inventory): Inventory {
  const listings = inventory.listings.filter((l) => !(l.kind === 'rental' && Number(l.node.id) >= 7_000_000 && Number(l.node.id) < 8_000_000));
  const buildings = new Set(listings.map((l) => l.buildingId));
  return { ...inventory, listings, buildings: inventory.buildings.filter((b) => buildings.has(b.id)) };
}
