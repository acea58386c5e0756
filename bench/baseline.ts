/**
 * The baselines a scenario's req/s is compared with: a `node:http` server answering the service's own answer (the same
 * status 200, content type and bytes) to every request, the limit of this machine for that answer.
 *
 * - {@link separateBaseline}: in a process of its own, as a client sees a server (issue 67). The ratio by it is the one
 *   the targets are stated in.
 * - {@link inProcessBaseline}: in the bench's own process, beside the load generator; kept for comparison with the
 *   figures recorded before issue 67. It shares a thread with autocannon's varying loads, so its ratio is higher.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running baseline: its base URL (`http://127.0.0.1:<port>`) and how to stop it. */
export interface Baseline {
  url: string;
  close(): Promise<void>;
}

/** The baseline in this process: a `node:http` server on a free loopback port answering `body` as `type`. */
export async function inProcessBaseline(type: string, body: Buffer): Promise<Baseline> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': type, 'content-length': body.length }).end(body));
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

/**
 * The same server's code run by a Node process of its own (`node -e`), the answer's bytes read from its standard input
 * and its type from the environment; it prints its port once it listens. Rejects if the process exits before.
 */
const separateServer = `
const { createServer } = require('node:http');
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const body = Buffer.concat(chunks);
  const headers = { 'content-type': process.env.BASELINE_TYPE, 'content-length': body.length };
  const server = createServer((_req, res) => res.writeHead(200, headers).end(body));
  server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
});
`;

/** The baseline in a process of its own (see the module's docstring); stopped with SIGTERM by `close`. */
export async function separateBaseline(type: string, body: Buffer): Promise<Baseline> {
  const child = spawn(process.execPath, ['-e', separateServer], {
    env: { ...process.env, BASELINE_TYPE: type },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(body);
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /port (\d+)/.exec(out);
      if (found) resolve(Number(found[1]));
    });
    child.once('exit', (code) => reject(new Error(`the separate baseline exited (${code}) before it listened`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((exited) => child.once('exit', exited));
    },
  };
}
