import compress from '@fastify/compress';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import zlib from 'node:zlib';
import { registerCaching } from '../http/plugins/caching.js';
import type { AppDeps } from './app-deps.js';

/**
 * What every answer goes through on its way out: CORS, compression (Brotli or gzip past 1 KiB), conditional requests
 * and caching headers, `X-Request-Id`, and the request metrics by matched route.
 */
export async function registerTransport(app: FastifyInstance, deps: Pick<AppDeps, 'config' | 'clock' | 'metrics'>): Promise<void> {
  await app.register(cors, {
    origin: deps.config.corsOrigins === '*' ? '*' : deps.config.corsOrigins,
    credentials: false,
    methods: ['GET', 'HEAD', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Accept', 'Accept-Encoding', 'If-None-Match', 'X-Request-Id'],
    // One string: the plugin joins a list again on every answer.
    exposedHeaders: [
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
      'ETag',
      'Link',
      'Last-Modified',
      'X-Total-Count',
    ].join(', '),
    maxAge: 600,
  });
  // Brotli at a moderate quality: most of its gain at a fraction of the default's cost. Answers only: every
  // route is a GET without a body, so request decompression would be two hooks on every request for nothing.
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: 1024,
    encodings: ['br', 'gzip'],
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
  });
  await registerCaching(app, { clock: deps.clock });
  // Set on arrival, so that an answer written outside the send path (an event stream) carries it too.
  // The rule for every hook here and in http/plugins/: one with nothing to wait for takes a callback, as an
  // async hook costs a promise and a microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  const metrics = deps.metrics;
  if (metrics) {
    // By the matched route's pattern, so that ids in paths never become label values; none matched: `unmatched`.
    app.addHook('onResponse', (request, reply, done) => {
      const labels = { route: request.routeOptions.url ?? 'unmatched', method: request.method, status: String(reply.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
      done();
    });
  }
}
