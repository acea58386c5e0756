import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { writeSharedDataWithoutRentHop } from './shared-data.js';
import { buildTemplateSet } from './template-build.js';
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
  'test/helpers/template-build.ts',
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
 * Meanwhile compiles the command line the tests run (`CLI`), as `npm start` does.
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

/**
 * Builds both template sets into the test cache ({@link TEMPLATE_FILES}) at once: the whole city's here, the one
 * without RentHop in a process of its own (template-build.ts), so that the two syncs use both cores.
 * Only the whole city's template holds NYC Open Data's records (the tests of mechanics do not read them).
 * @throws Error when either build fails (the other process's cause on this run's standard error).
 */
async function buildTemplates(): Promise<void> {
  const asOf = new Date();
  // Its messages (a template synced again) go to this run's standard error as the city's do.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'test', 'helpers', 'template-build.ts'),
      SHARED_DATA_WITHOUT_RENTHOP,
      SITE_DATA_WITHOUT_RENTHOP_FILE,
      TEMPLATE_WITHOUT_RENTHOP_DB,
      asOf.toISOString(),
    ],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const withoutRentHop = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`the template without RentHop was not built: its process ended with ${code}`);
  });
  const city = buildTemplateSet(SHARED_DATA, SITE_DATA_FILE, TEMPLATE_DB, asOf, true).catch((error: unknown) => {
    child.kill();
    throw error;
  });
  await Promise.all([city, withoutRentHop]);
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
