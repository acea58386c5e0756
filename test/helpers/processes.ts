import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { waitFor } from './wait.js';

/** A process a test started: its output lines as they come (also written to `logFile`), and how to end it. */
export interface Started {
  child: ChildProcess;
  /** stdout and stderr lines, in arrival order. */
  lines: string[];
  /** Resolves with the exit code (or the signal's name) when the process ends. */
  exited: Promise<number | string>;
  /** Waits until a line matches `pattern`; fails if the process ends first or after `timeoutMs`. */
  waitForLine: (pattern: RegExp, what: string, timeoutMs?: number) => Promise<string>;
  /** Sends `signal` and waits for the process to end. */
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}

/** Starts `command args` with `env` (added to this process's), collecting its output lines into `logFile` too. */
export function startProcess(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd: string; logFile: string },
): Started {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const lines: string[] = [];
  let ended = false;
  for (const stream of [child.stdout!, child.stderr!]) {
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      log.write(chunk);
      const parts = (rest + chunk.toString()).split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
    });
  }
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = true;
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  return {
    child,
    lines,
    exited,
    async waitForLine(pattern, what, timeoutMs = 120_000) {
      let found: string | undefined;
      await waitFor(
        () => {
          found = lines.find((l) => pattern.test(l));
          if (!found && ended) throw new Error(`${command} ${args.join(' ')} ended before ${what}:\n${lines.slice(-20).join('\n')}`);
          return found !== undefined;
        },
        what,
        timeoutMs,
      );
      return found!;
    },
    async stop(signal = 'SIGTERM') {
      if (ended) return;
      child.kill(signal);
      await exited;
      log.end();
    },
  };
}

/** A TCP port free on loopback now (the OS picks it; another process could take it before it is used). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
