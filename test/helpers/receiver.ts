import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a test receiver got. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/**
 * A webhook receiver on loopback: records every POST and answers the status `answer` picks (given the
 * path and how many times this `webhook-id` came before, 0 for the first), `delayMs` after the body arrived.
 */
export async function startReceiver(
  answer: (path: string, seen: number) => number,
  options: { delayMs?: number } = {},
): Promise<{ url: string; requests: Received[]; close: () => Promise<void> }> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const status = answer(req.url ?? '/', requests.filter((r) => r.headers['webhook-id'] === id).length);
      requests.push({ path: req.url ?? '/', headers: req.headers, body, status, at: Date.now() });
      const send = () => res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now');
      if (options.delayMs) setTimeout(send, options.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
