/**
 * One template set of the tests (global-setup.ts): the local upstream's site data built from a shared data folder,
 * written as JSON, and synced into a new SQLite mirror through the real client and local upstream, fully hydrated.
 * Global setup builds the whole city's set in its own process and, meanwhile, the set without RentHop by running
 * this file in a process of its own:
 * `node --import tsx test/helpers/template-build.ts <shared data folder> <site data file> <database file> <as of>`.
 */
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { buildSiteData } from '../../src/dataset/build-site-data.js';
import { startRuntime } from '../../src/runtime.js';
import { PLANNER_STATISTICS_PRAGMA } from '../../src/store/database.js';
import type { SiteData } from '../../src/upstream/local/site-data.js';
import { SHARED_DATA } from './paths.js';

/**
 * Builds the site data of the shared data folder `sharedData` as of `asOf` into `siteDataFile`, and syncs it into
 * a new SQLite mirror at `file`; with `openData`, NYC Open Data's records too.
 * @throws Error when the mirror still has listings to hydrate after three syncs.
 */
export async function buildTemplateSet(
  sharedData: string,
  siteDataFile: string,
  file: string,
  asOf: Date,
  openData: boolean,
): Promise<void> {
  const siteData = buildSiteData(sharedData, asOf);
  writeFileSync(siteDataFile, JSON.stringify(siteData));
  await syncTemplate(file, siteData, openData);
}

/**
 * Syncs `siteData` into a new SQLite database at `file` through the real client and local upstream, fully
 * hydrated; with `openData`, NYC Open Data's records too, through the SODA client and the local emulator.
 */
async function syncTemplate(file: string, siteData: SiteData, openData: boolean): Promise<void> {
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
      siteData,
      logger: pino({ level: 'silent' }),
      scheduler: false,
      initialOpenDataSync: openData,
      billing: false,
    });
    // The template is fully hydrated: wait for the background hydration (and open data sync) the first sync started.
    await runtime.coordinator.idle();
    await runtime.close();
    const left = backlogAfterCheckpoint(file);
    if (left === 0) return gatherStatistics(file);
    if (attempt === 3) throw new Error(`the template ${file} still had ${left} listings to hydrate after ${attempt} syncs`);
    console.error(`the template ${file} had ${left} listings to hydrate after its sync: syncing it again`);
  }
}

/**
 * Gathers the query planner's statistics into the template at `file` as the store does when it opens a mirror
 * ({@link PLANNER_STATISTICS_PRAGMA}): each copy a test opens then finds them current, where each open of a copy
 * gathered them again (most of a second of the whole city's).
 */
function gatherStatistics(file: string): void {
  const sqlite = new Database(file, { fileMustExist: true });
  try {
    sqlite.pragma(PLANNER_STATISTICS_PRAGMA);
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
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

// Run as a process of its own by global setup: the set without NYC Open Data's records.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [sharedData, siteDataFile, file, asOf] = process.argv.slice(2);
  await buildTemplateSet(sharedData, siteDataFile, file, new Date(asOf), false);
}
