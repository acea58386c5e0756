import { execFile as execFileCb } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { afterAll } from 'vitest';
import { CLI, ROOT, SHARED_DATA } from '../helpers/paths.js';
import { startProcess, type Started } from '../helpers/processes.js';
import { writeSharedDataWithoutRentHop } from '../helpers/shared-data.js';

// What the files of the fault matrix (issue 45, docs/operations.md "Tested") share: real processes of the service
// in a folder of the file's own, a client that waits as long as the service's longest documented wait, a load of
// searches and lookups, and reads of a SQLite mirror another process writes.

/** `execFile` as a promise. */
export const execFile = promisify(execFileCb);

/** Where every process's output goes: `.cache/test-output/faults/<name>.log`. */
export const OUTPUT = resolve(ROOT, '.cache', 'test-output', 'faults');

/**
 * How long a request of the test waits: well past the service's longest documented wait, a listing the mirror lacks
 * looked up while the caller waits (REQUEST_DEADLINE_SECONDS, then 504), on a busy machine.
 */
const REQUEST_TIMEOUT_MS = 60_000;

/** The 5xx the API documents for an upstream that fails a lookup a caller waits for (docs/decisions.md). */
export const UPSTREAM_CODES = ['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'UPSTREAM_BUSY'];

/** Limits out of the way of the load (its answers are about faults, not plans). */
export const ROOMY = { RATE_LIMIT_BUSINESS_PER_MINUTE: '1000000', QUOTA_BUSINESS_PER_MONTH: '100000000' };

/** The active listings still waiting for their detail. */
export const ACTIVE_BACKLOG = "select count(*) as n from listings where needs_detail = 1 and status = 'ACTIVE'";

/** A test file's processes: each started in its folder, every one still running killed after the file. */
export interface FaultRun {
  /** The file's temporary folder, readable by the `postgres` user (a PostgreSQL of the test keeps its data inside). */
  dir: string;
  /** Starts the command line with `args` and `env` in {@link dir}; its output goes to {@link OUTPUT}`/<name>.log`. */
  start(name: string, args: string[], env: Record<string, string>): Started;
  /** Starts any program `command` in {@link dir}, its output to {@link OUTPUT}`/<name>.log`. */
  startProgram(name: string, command: string, args: string[], env: Record<string, string>): Started;
  /** A copy of the shared data folder without the RentHop rentals, at {@link dir}`/<name>`: its path. */
  sharedWithoutRentHop(name: string): string;
  /** Runs the command line with `args` and `env` to its end (logs silenced); its standard output, trimmed. */
  cli(args: string[], env: Record<string, string>): Promise<string>;
}

/** A {@link FaultRun} for the calling test file, its processes killed with SIGKILL after the file's tests. */
export function faultRun(): FaultRun {
  const dir = mkdtempSync(join(tmpdir(), 'nyc-listings-faults-'));
  chmodSync(dir, 0o755);
  mkdirSync(OUTPUT, { recursive: true });
  const processes: Started[] = [];
  afterAll(async () => {
    for (const p of processes.reverse()) await p.stop('SIGKILL');
    await agent.close();
  });
  const startProgram = (name: string, command: string, args: string[], env: Record<string, string>) => {
    const p = startProcess(command, args, { cwd: dir, env, logFile: join(OUTPUT, `${name}.log`) });
    processes.push(p);
    return p;
  };
  return {
    dir,
    startProgram,
    sharedWithoutRentHop(name) {
      const folder = join(dir, name);
      writeSharedDataWithoutRentHop(folder);
      return folder;
    },
    start: (name, args, env) =>
      startProgram(name, process.execPath, [CLI, ...args], { LOG_LEVEL: 'info', SHARED_DATA_DIR: SHARED_DATA, ...env }),
    async cli(args, env) {
      const { stdout } = await execFile(process.execPath, [CLI, ...args], {
        cwd: dir,
        env: { ...process.env, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'silent', ...env },
      });
      return stdout.trim();
    },
  };
}

const agent = new Agent({ connections: 16 });

/** GET on a service: status, headers and the parsed JSON body (null when not JSON). */
export async function fetchJson(url: string, key?: string): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const answer = await request(url, {
    dispatcher: agent,
    headers: key ? { authorization: `Bearer ${key}` } : {},
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const text = await answer.body.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: answer.statusCode, headers: answer.headers, body };
}

/**
 * A load of searches and listing lookups in `loops` loops until `stop()`, each loop about ten requests a second
 * (client traffic beside the background work, not a saturation test): every answer's status, and the 5xx with
 * their codes.
 */
export function load(base: string, key: string, loops = 2) {
  const statuses = new Map<number, number>();
  const serverErrors: { status: number; code: string | undefined; retryAfter: unknown; at: number }[] = [];
  let running = true;
  let n = 0;
  const loop = async (i: number) => {
    while (running) {
      n++;
      // Distinct searches (a new price bound each time), so that they reach the database, not the answer cache.
      const path = n % 3 === 0 ? `/v1/property/${1000 + (n % 5000)}` : `/v1/search/rentals?maxPrice=${2000 + (n % 4000) + i}&perPage=5`;
      try {
        const { status, headers, body } = await fetchJson(`${base}${path}`, key);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500) serverErrors.push({ status, code: body?.code, retryAfter: headers['retry-after'], at: Date.now() });
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const done = Promise.all(Array.from({ length: loops }, (_, i) => loop(i)));
  return {
    statuses,
    serverErrors,
    count: () => [...statuses.values()].reduce((a, b) => a + b, 0),
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Reads a SQLite mirror another process writes (WAL: the reader sees the last commit). */
export function readMirror<T>(file: string, read: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}
