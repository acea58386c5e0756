/** The processes a bench run starts and watches: free ports, the command line started and stopped, memory and CPU read from /proc. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A TCP port free on the loopback now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((ready) => probe.listen(0, '127.0.0.1', ready));
  const { port } = probe.address() as AddressInfo;
  await new Promise((closed) => probe.close(closed));
  return port;
}

/**
 * The environment and Node flags `npm start` runs the service with: package.json's start script, the one place they
 * are set (`NAME=value ... node <flags> dist/main.js serve`), so that a bench measures the service as it runs.
 */
export function npmStart(): { env: Record<string, string>; nodeFlags: string[] } {
  const script = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ');
  const node = script.indexOf('node');
  const env = Object.fromEntries(script.slice(0, node).map((assignment) => assignment.split('=') as [string, string]));
  return { env, nodeFlags: script.slice(node + 1, script.indexOf('dist/main.js')) };
}

/** Runs the compiled command line, `node dist/main.js <args>`, and resolves once its stderr matches `ready` (with the match). */
export async function spawnCommand(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  nodeFlags: string[] = [],
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  // The compiled command line (`npm run bench` builds it first), as `npm start` runs it: under tsx the
  // service carried a loader and esbuild's name-keeping wrappers, which production does not.
  // BENCH_SERVICE_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/profiles`) profiles the service under the bench.
  const serviceFlags = args[0] === 'serve' ? (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(' ').filter(Boolean) : [];
  const child = spawn(process.execPath, [...nodeFlags, ...serviceFlags, 'dist/main.js', ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (process.env.BENCH_SERVICE_LOG && args[0] === 'serve') child.stderr!.pipe(createWriteStream(process.env.BENCH_SERVICE_LOG));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-8000);
      const found = ready.exec(log);
      if (found) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited (${code}): ${log.slice(-2000)}`)));
  });
  return { child, match };
}

/** Stops `child` (SIGTERM) and resolves once it has exited. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((exited) => child.once('exit', exited));
}

/** Resident memory of a process, MiB (Linux): now (VmRSS) and the most it has held since it started (VmHWM). */
export function rssOf(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mib = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024);
  return { now: mib('VmRSS'), peak: mib('VmHWM') };
}

/**
 * Resets the RSS high-water mark of process `pid` (`VmHWM`, which {@link rssOf} gives as `peak`), so that the next
 * reading is the peak since now (Linux: `/proc/<pid>/clear_refs`). Returns false where the kernel does not allow it.
 */
export function resetRssPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time a process has used so far (user + system), in microseconds (Linux: /proc, in clock ticks of 10 ms). */
export function cpuMicrosOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // After the command name: utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
