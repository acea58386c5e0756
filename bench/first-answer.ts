/**
 * The first minute of `npm start` on a fresh clone (issue 67): a clone of this checkout's HEAD beside it (so that
 * `../shared/data` is the same), its packages those of this checkout's `npm ci` (linked, not installed again: the
 * same lockfile; installing is not part of the measure), then `npm start` with nothing else: the build, the local
 * upstream built from the shared data, an empty mirror, the first sync.
 *
 * Meanwhile it asks the README's search (Manhattan 2-bedroom condos) every 250 ms, and records, in seconds from
 * `npm start`: the first answer of any kind (the service listens), the first 200, the first 200 with listings, the
 * first whose `meta.source` is not `refreshing` (the scope is synced), and the service's progress lines (scopes
 * synced, details hydrated, the search index) until the first start is all in. Anonymous limits are raised for the
 * run only, so that its polling is never refused.
 *
 * Usage: `npm run bench:first-answer`. FIRST_ANSWER_DIR (default `../nyc-listings-first-answer`, removed first),
 * FIRST_ANSWER_TIMEOUT_SECONDS (300). Writes bench/results/<time>-first-answer.json.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { freePort } from './processes.js';

const ROOT = resolve(import.meta.dirname, '..');
const dir = resolve(process.env.FIRST_ANSWER_DIR ?? join(ROOT, '..', 'nyc-listings-first-answer'));
const timeoutSeconds = Number(process.env.FIRST_ANSWER_TIMEOUT_SECONDS ?? 300);
const SEARCH = '/v1/search/sales?areas=100&buildingType=CONDO&minBeds=2&maxBeds=2&sort=PRICE';

/** Moments of the first start, seconds from `npm start` (null: not reached before the end). */
interface FirstStart {
  commit: string;
  listening: number | null;
  firstOk: number | null;
  firstWithListings: number | null;
  firstSynced: number | null;
  allIn: number | null;
  /** The service's progress lines as it wrote them, each with its second. */
  progress: { second: number; line: string }[];
}

rmSync(dir, { recursive: true, force: true });
execFileSync('git', ['clone', '-q', ROOT, dir]);
symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir }).toString().trim();
const port = await freePort();
const result: FirstStart = {
  commit,
  listening: null,
  firstOk: null,
  firstWithListings: null,
  firstSynced: null,
  allIn: null,
  progress: [],
};
const started = performance.now();
const second = () => Math.round((performance.now() - started) / 100) / 10;
const child = spawn('npm', ['start'], {
  cwd: dir,
  detached: true,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_FREE_PER_MINUTE: '1000000',
    QUOTA_FREE_PER_MONTH: '100000000',
  },
});
watchProgress(child, result);
const deadline = started + timeoutSeconds * 1000;
try {
  while (result.allIn === null && performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode})`);
    await ask(result);
    await new Promise((tick) => setTimeout(tick, 250));
  }
} finally {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // Already gone.
  }
}
const out = resolve(ROOT, 'bench', 'results');
mkdirSync(out, { recursive: true });
const file = join(out, `${new Date().toISOString().replace(/[:.]/g, '-')}-first-answer.json`);
writeFileSync(file, `${JSON.stringify({ command: 'npm run bench:first-answer', ...result }, null, 1)}\n`);
console.log(
  [
    `first start of a fresh clone at ${commit}, seconds from npm start:`,
    `  listening ${result.listening}; first 200 ${result.firstOk}; first with listings ${result.firstWithListings};`,
    `  first with its scope synced ${result.firstSynced}; all in ${result.allIn}`,
    `written to ${file}`,
  ].join('\n'),
);
process.exit(result.firstWithListings === null ? 1 : 0);

/** One ask of the search; notes the moments it reaches. */
async function ask(into: FirstStart): Promise<void> {
  try {
    const answer = await request(`http://127.0.0.1:${port}${SEARCH}`, { headersTimeout: 5000, bodyTimeout: 5000 });
    const at = second();
    into.listening ??= at;
    if (answer.statusCode !== 200) {
      await answer.body.dump();
      return;
    }
    const body = (await answer.body.json()) as { data: unknown[]; meta: { source?: string } };
    into.firstOk ??= at;
    if (body.data.length > 0) into.firstWithListings ??= at;
    if (body.meta.source !== 'refreshing') into.firstSynced ??= at;
  } catch {
    // Not listening yet.
  }
}

/** A log line's message: pino's `msg` of a JSON line, or the line itself (npm's own lines are not JSON). */
function messageOf(line: string): string {
  try {
    const parsed = JSON.parse(line) as { msg?: unknown };
    return typeof parsed.msg === 'string' ? parsed.msg : line;
  } catch {
    return line;
  }
}

/** Keeps the service's progress lines (listening, first start, the search index, the estimates) with their second. */
function watchProgress(process: ChildProcess, into: FirstStart): void {
  let pending = '';
  const read = (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const message = messageOf(line);
      if (!/listening on|first start|search index of|estimates:/.test(message)) continue;
      into.progress.push({ second: second(), line: message });
      if (/all in/.test(message)) into.allIn ??= second();
    }
  };
  process.stdout!.on('data', read);
  process.stderr!.on('data', read);
}
