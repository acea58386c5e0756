import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { buildInventory } from '../../src/dataset/build-inventory.js';
import { startRuntime } from '../../src/runtime.js';
import type { Inventory } from '../../src/upstream/local/inventory.js';
import { writeSharedDataWithoutRentHop } from './shared-data.js';
import {
  CACHE,
  INVENTORY_FILE,
  INVENTORY_WITHOUT_RENTHOP_FILE,
  ROOT,
  SHARED_DATA,
  SHARED_DATA_WITHOUT_RENTHOP,
  TEMPLATE_DB,
  TEMPLATE_WITHOUT_RENTHOP_DB,
} from './paths.js';

/**
 * Once per test run: builds the local upstream's inventory from the real data and syncs it into a
 * template SQLite database through the real client and local upstream; the same for the inventory
 * without the RentHop rentals. Each test file copies one inventory and its template.
 * Meanwhile, on the other core, compiles the command line the tests run (`CLI`), as `npm start` does.
 */
export default async function setup(): Promise<void> {
  const build = promisify(execFile)(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { cwd: ROOT },
  );
  rmSync(CACHE, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  // Every temporary file of this run (database copies of about 200 MB, logs, key files), in the test workers
  // and the processes they start, under the cache the next run wipes: a machine that runs the suite again and
  // again keeps one run's leftovers, not all of them.
  const tmp = join(CACHE, 'tmp');
  mkdirSync(tmp, { recursive: true });
  process.env.TMPDIR = tmp;
  const asOf = new Date();
  const inventory = buildInventory(SHARED_DATA, asOf);
  writeFileSync(INVENTORY_FILE, JSON.stringify(inventory));
  // Only the whole city's template holds NYC Open Data's records (the tests of mechanics do not read them).
  await syncTemplate(TEMPLATE_DB, inventory, true);
  writeSharedDataWithoutRentHop(SHARED_DATA_WITHOUT_RENTHOP);
  const withoutRentHop = buildInventory(SHARED_DATA_WITHOUT_RENTHOP, asOf);
  writeFileSync(INVENTORY_WITHOUT_RENTHOP_FILE, JSON.stringify(withoutRentHop));
  await syncTemplate(TEMPLATE_WITHOUT_RENTHOP_DB, withoutRentHop, false);
  await build;
}

/**
 * Syncs `inventory` into a new SQLite database at `file` through the real client and local upstream, fully
 * hydrated; with `openData`, NYC Open Data's records too, through the SODA client and the local stand-in.
 */
async function syncTemplate(file: string, inventory: Inventory, openData: boolean): Promise<void> {
  const config = loadConfig({
    DATABASE_URL: file,
    SHARED_DATA_DIR: SHARED_DATA,
    SYNC_INTERVAL_SECONDS: '0',
    LOG_LEVEL: 'silent',
    MARKET_CLOCK: 'off',
  });
  // A template must hold every listing's details: a test runtime over one with a backlog would hydrate the
  // rest while its tests compare rows. A hydration run that gives up (the upstream refusing every call, the
  // build running beside this sync) waits its backoff before trying again, so a template left with a backlog
  // is synced again from nothing, and a third such run fails the run. The backlog is counted in the file after its log is copied back: the CI failures of
  // 3f6e811 and 1b5f6e9 most likely came from copies of the main file alone (backlogAfterCheckpoint).
  for (let attempt = 1; ; attempt++) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    const runtime = await startRuntime(config, {
      inventory,
      logger: pino({ level: 'silent' }),
      scheduler: false,
      initialOpenDataSync: openData,
    });
    // The template is fully hydrated: wait for the background hydration (and open data sync) the first sync started.
    await runtime.coordinator.idle();
    await runtime.close();
    const left = backlogAfterCheckpoint(file);
    if (left === 0) return;
    if (attempt === 3) throw new Error(`the template ${file} still had ${left} listings to hydrate after ${attempt} syncs`);
    console.error(`the template ${file} had ${left} listings to hydrate after its sync: syncing it again`);
  }
}

/**
 * Copies the write-ahead log of the closed SQLite database at `file` back into its main file, since the
 * tests copy the main file alone, and a copy without the log's last writes (up to 80 MB of them:
 * database.ts) lacks the hydration they made. Returns the active listings still waiting for their
 * detail, counted in that file.
 * @throws Error when a connection to the file is still open.
 */
function backlogAfterCheckpoint(file: string): number {
  const log = existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0;
  if (log > 0) console.error(`the template ${file} was closed with ${log} bytes of write-ahead log left: copying them back`);
  const sqlite = new Database(file, { fileMustExist: true });
  try {
    // Every frame copied back into the file; still in WAL mode, as every mirror is.
    const [checkpoint] = sqlite.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (checkpoint.busy) throw new Error(`the template ${file} is still open elsewhere: its write-ahead log cannot be copied back`);
    return (sqlite.prepare("select count(*) as n from listings where needs_detail = 1 and status = 'ACTIVE'").get() as { n: number }).n;
  } finally {
    sqlite.close();
  }
}
