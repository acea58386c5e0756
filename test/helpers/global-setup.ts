import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { buildSiteData } from '../../src/dataset/build-site-data.js';
import { startRuntime } from '../../src/runtime.js';
import { PLANNER_STATISTICS_PRAGMA } from '../../src/store/database.js';
import type { SiteData } from '../../src/upstream/local/site-data.js';
import { writeSharedDataWithoutRentHop } from './shared-data.js';
import {
  CACHE,
  SITE_DATA_FILE,
  SITE_DATA_WITHOUT_RENTHOP_FILE,
  ROOT,
  SHARED_DATA,
  SHARED_DATA_WITHOUT_RENTHOP,
  TEMPLATE_DB,
  TEMPLATE_WITHOUT_RENTHOP_DB,
  TEMPLATES,
} from './paths.js';

/**
 * What shapes the templates: the shared data (each file's path, size and time), and the code and migrations that
 * build the site data and sync it (the files' contents). Another content makes another template.
 */
const TEMPLATE_SOURCES = [
  'src/dataset',
  'src/estimate',
  'src/domain',
  'src/store',
  'src/sync',
  'src/upstream',
  'src/reference',
  'test/helpers/global-setup.ts',
  'test/helpers/shared-data.ts',
  'package-lock.json',
];

/**
 * A template is reused for this long after it was synced. Its scopes' last syncs are as old as it is, and
 * searches turn stale after FRESHNESS_SEARCH_SECONDS (an hour): a template this young stays fresh through a
 * whole run.
 */
const TEMPLATE_REUSE_SECONDS = 30 * 60;

/** The files of each template set, built together (the site data, then its synced SQLite mirror). */
const TEMPLATE_FILES = [SITE_DATA_FILE, TEMPLATE_DB, SITE_DATA_WITHOUT_RENTHOP_FILE, TEMPLATE_WITHOUT_RENTHOP_DB];

/**
 * Once per test run: the local upstream's site data built from the real data and synced into a template SQLite
 * database through the real client and local upstream; the same for the site data without the RentHop rentals.
 * Each test file copies one set's site data and template. A set built by an earlier run from the same sources
 * ({@link TEMPLATE_SOURCES}) within {@link TEMPLATE_REUSE_SECONDS} is reused; CI (`CI` set) always builds afresh.
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
  writeSharedDataWithoutRentHop(SHARED_DATA_WITHOUT_RENTHOP);
  const kept = join(TEMPLATES, sourcesHash());
  const reusable = !process.env.CI && TEMPLATE_FILES.every((file) => existsSync(join(kept, relative(CACHE, file))));
  if (reusable && (Date.now() - statSync(join(kept, relative(CACHE, TEMPLATE_DB))).mtimeMs) / 1000 < TEMPLATE_REUSE_SECONDS) {
    console.error(`reusing the test templates of ${kept}`);
  } else {
    await buildTemplates();
    // Kept for the next run, under the hash of what made them; older sets go.
    rmSync(TEMPLATES, { recursive: true, force: true });
    const building = `${kept}.partial`;
    mkdirSync(building, { recursive: true });
    for (const file of TEMPLATE_FILES) linkSync(file, join(building, relative(CACHE, file)));
    renameSync(building, kept);
    await build;
    return;
  }
  for (const file of TEMPLATE_FILES) linkSync(join(kept, relative(CACHE, file)), file);
  await build;
}

/** Builds both template sets into the test cache ({@link TEMPLATE_FILES}). */
async function buildTemplates(): Promise<void> {
  const asOf = new Date();
  const siteData = buildSiteData(SHARED_DATA, asOf);
  writeFileSync(SITE_DATA_FILE, JSON.stringify(siteData));
  // Only the whole city's template holds NYC Open Data's records (the tests of mechanics do not read them).
  await syncTemplate(TEMPLATE_DB, siteData, true);
  const withoutRentHop = buildSiteData(SHARED_DATA_WITHOUT_RENTHOP, asOf);
  writeFileSync(SITE_DATA_WITHOUT_RENTHOP_FILE, JSON.stringify(withoutRentHop));
  await syncTemplate(TEMPLATE_WITHOUT_RENTHOP_DB, withoutRentHop, false);
}

/** A hash of {@link TEMPLATE_SOURCES}' contents and of the shared data folder's files (path, size, time). */
function sourcesHash(): string {
  const hash = createHash('sha256');
  const walk = (path: string, contents: boolean): void => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const name of readdirSync(path).sort()) walk(join(path, name), contents);
      return;
    }
    hash.update(`${path}\0${stat.size}\0`);
    hash.update(contents ? readFileSync(path) : String(stat.mtimeMs));
  };
  for (const source of TEMPLATE_SOURCES) walk(join(ROOT, source), true);
  walk(SHARED_DATA, false);
  return hash.digest('hex').slice(0, 16);
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
