import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

/** A running metrics server: where it listens, and how to stop it. */
export interface MetricsServer {
  url: string;
  close: () => Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus' text format) on its own port, apart from the API, so that the metrics
 * are never on the public port and cost the API nothing between scrapes. Anything else is a 404. A scrape that
 * fails to read a source answers 500 with the cause in plain text (Prometheus then marks the target down).
 * @throws Error when the port cannot be listened on.
 */
export async function startMetricsServer(metrics: Metrics, host: string, port: number): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method !== 'GET' && req.method !== 'HEAD') || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.scrape().then(
      ({ body, contentType }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body),
      (error: Error) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`scrape failed: ${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
