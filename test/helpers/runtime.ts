import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { loadConfig, type Plan } from '../../src/config.js';
import type { SiteData } from '../../src/upstream/local/site-data.js';
import { cityDatasets } from '../../src/dataset/city-datasets.js';
import type { SodaRow } from '../../src/domain/city-records.js';
import { issueKey } from '../../src/keys/key-admin.js';
import { startRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime.js';
import { SITE_DATA_FILE, SITE_DATA_WITHOUT_RENTHOP_FILE, SHARED_DATA, TEMPLATE_DB, TEMPLATE_WITHOUT_RENTHOP_DB } from './paths.js';

/**
 * The site data global setup built (a fresh copy each call: tests may change it); `withoutRentHop`: the one
 * without the RentHop rentals (global-setup.ts says which tests it is for).
 */
export function loadSiteData(withoutRentHop = false): SiteData {
  const raw = JSON.parse(readFileSync(withoutRentHop ? SITE_DATA_WITHOUT_RENTHOP_FILE : SITE_DATA_FILE, 'utf8')) as SiteData & {
    asOf: string;
  };
  return { ...raw, asOf: new Date(raw.asOf) };
}

/** The city's files each SODA dataset was read from, once a test worker: by shared data folder, then dataset id. */
const cityRowsRead = new Map<string, Map<string, Promise<readonly SodaRow[]>>>();

/**
 * The local SODA emulator's datasets over the city's files under `sharedDataDir`, each read once a test worker (the
 * recorded sales' workbooks and PLUTO take seconds) and handed to each runtime as an array of its own: tests splice
 * and push rows; the rows themselves are frozen, so one changed in place fails the test that did it.
 */
function cityDatasetsReadOnce(sharedDataDir: string): Record<string, () => Promise<SodaRow[]>> {
  const read = cityRowsRead.get(sharedDataDir) ?? new Map<string, Promise<readonly SodaRow[]>>();
  cityRowsRead.set(sharedDataDir, read);
  const files = cityDatasets(sharedDataDir);
  return Object.fromEntries(
    Object.entries(files).map(([dataset, load]) => [
      dataset,
      async () => {
        let rows = read.get(dataset);
        if (!rows) {
          rows = load().then((all) => all.map((row) => Object.freeze(row)));
          read.set(dataset, rows);
          // A read that failed is tried again by the next runtime.
          rows.catch(() => read.delete(dataset));
        }
        return [...(await rows)];
      },
    ]),
  );
}

export interface TestRuntime extends Runtime {
  siteData: SiteData;
  /** Issues a key of `plan` in this runtime's store (with `origins`, a publishable key; with `operations`, limited to those). */
  key: (plan: Plan, options?: { expires?: string; label?: string; origins?: string[]; operations?: string[] }) => Promise<string>;
}

/**
 * A real runtime over a copy of the synced template database (SQLite) and a real local upstream on
 * loopback, with the scheduler off. `env` adds configuration; `fresh: true` starts from an empty
 * database instead (the first sync then runs); `withoutRentHop: true` uses the site data and template without
 * the RentHop rentals (a fifth of the listings, for tests of mechanics). The local upstream records its
 * queries. Per-minute limits are raised out of the way unless `realLimits` is set (the rate-limit tests use
 * the plans' real limits); background jobs do not retry a failed request (`JOB_RETRY_ATTEMPTS` 1) unless `env` says.
 */
export async function startTestRuntime(
  env: Record<string, string> = {},
  options: RuntimeOptions & { fresh?: boolean; realLimits?: boolean; withoutRentHop?: boolean } = {},
): Promise<TestRuntime> {
  const roomy = options.realLimits
    ? {}
    : Object.fromEntries(['FREE', 'STARTER', 'PRO', 'BUSINESS'].map((p) => [`RATE_LIMIT_${p}_PER_MINUTE`, '100000']));
  const dir = mkdtempSync(join(tmpdir(), 'nyc-listings-test-'));
  const databaseUrl = env.DATABASE_URL ?? join(dir, 'mirror.db');
  if (!options.fresh && !env.DATABASE_URL) copyFileSync(options.withoutRentHop ? TEMPLATE_WITHOUT_RENTHOP_DB : TEMPLATE_DB, databaseUrl);
  // A background job's failed request is not waited out and asked again (JOB_RETRY_ATTEMPTS) unless a test asks:
  // the tests of faults see a scope fail at once, as they did before the retry; test/sync/hydration-faults.test.ts
  // and the fault matrix run with it. The estimates' comparables are read again after every write unless a test asks
  // for their least age (test/estimate/estimate-freshness.test.ts does).
  const config = loadConfig({
    SHARED_DATA_DIR: SHARED_DATA,
    SYNC_INTERVAL_SECONDS: '0',
    LOG_LEVEL: 'silent',
    MARKET_CLOCK: 'off',
    JOB_RETRY_ATTEMPTS: '1',
    ESTIMATE_REFRESH_SECONDS: '0',
    ...roomy,
    ...env,
    DATABASE_URL: databaseUrl,
  });
  const siteData = options.siteData ?? loadSiteData(options.withoutRentHop);
  // A fresh store syncs NYC Open Data only when a test asks (it reads the city's files for seconds).
  const runtime = await startRuntime(config, {
    logger: pino({ level: 'silent' }),
    scheduler: false,
    recordUpstreamQueries: true,
    initialOpenDataSync: false,
    openDataRows: cityDatasetsReadOnce(config.sharedDataDir),
    ...options,
    siteData,
  });
  return {
    ...runtime,
    siteData,
    key: (plan, o = {}) =>
      issueKey(runtime.keys, config, {
        plan,
        label: o.label ?? null,
        expires: o.expires ?? null,
        origins: o.origins ?? null,
        operations: o.operations ?? null,
      }),
  };
}

/**
 * For a test file: starts a runtime (see {@link startTestRuntime}) and a key of `plan` before its
 * tests and closes the runtime after them. Read `t.rt` and `t.key` inside tests.
 */
export function useTestRuntime(
  plan: Plan = 'pro',
  env: Record<string, string> = {},
  options: { withoutRentHop?: boolean } = {},
): { rt: TestRuntime; key: string } {
  const t = {} as { rt: TestRuntime; key: string };
  beforeAll(async () => {
    t.rt = await startTestRuntime(env, options);
    t.key = await t.rt.key(plan);
  });
  afterAll(async () => t.rt?.close());
  return t;
}

/** The runtimes this test worker shares among its files, by template ({@link useSharedTestRuntime}). */
const sharedRuntimes = new Map<'city' | 'without-renthop', Promise<TestRuntime>>();

/**
 * For a test file that only reads: the runtime over the whole city's template (or, `withoutRentHop`, the other one)
 * that this test worker started for the first file that asked, and a key of `plan` of the file's own. A worker runs
 * its files one after another in one process (vitest.config.ts, `isolate: false`), so a later file that asks finds it
 * started: a start copies the template and builds the search index, the estimates' pools and the price positions, the
 * longest part of a file's set-up at the whole city. No file closes it; the worker's end does.
 *
 * Only for files that neither write to the mirror, nor change the configuration, the clock or the site data, nor count
 * what the runtime did before them (its metrics, its caches' hits): those start their own ({@link useTestRuntime}).
 */
export function useSharedTestRuntime(plan: Plan = 'pro', options: { withoutRentHop?: boolean } = {}): { rt: TestRuntime; key: string } {
  const t = {} as { rt: TestRuntime; key: string };
  beforeAll(async () => {
    const template = options.withoutRentHop ? 'without-renthop' : 'city';
    let started = sharedRuntimes.get(template);
    if (!started) {
      started = startTestRuntime({}, options);
      sharedRuntimes.set(template, started);
      // A start that failed is tried again by the next file.
      started.catch(() => sharedRuntimes.delete(template));
    }
    t.rt = await started;
    t.key = await t.rt.key(plan);
  });
  return t;
}

/** Where each runtime's app listens, once it was asked to ({@link listening}). */
const addresses = new WeakMap<TestRuntime, Promise<string>>();

/**
 * The base URL (`http://127.0.0.1:<port>`) of `rt`'s app on a free loopback port: listening from the first call, the
 * same address after it (a runtime shared among files, {@link useSharedTestRuntime}, listens once).
 */
export function listening(rt: TestRuntime): Promise<string> {
  let address = addresses.get(rt);
  if (!address) {
    address = rt.app.listen({ port: 0, host: '127.0.0.1' });
    addresses.set(rt, address);
  }
  return address;
}

/**
 * For a test file whose tests each start their own runtimes: returns a starter (see
 * {@link startTestRuntime}, with `defaults` under each call's options); every runtime it started is closed
 * after each test.
 */
export function useRuntimesPerTest(
  defaults: Parameters<typeof startTestRuntime>[1] = {},
): (env?: Record<string, string>, options?: Parameters<typeof startTestRuntime>[1]) => Promise<TestRuntime> {
  const started: TestRuntime[] = [];
  afterEach(async () => {
    while (started.length) await started.pop()!.close();
  });
  return async (env = {}, options = {}) => {
    const rt = await startTestRuntime(env, { ...defaults, ...options });
    started.push(rt);
    return rt;
  };
}
