import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import { registerFirstSyncGate } from './http/plugins/first-sync.js';
import { registerAuth } from './http/plugins/auth.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/plugins/errors.js';
import { registerRateLimits } from './http/plugins/rate-limits.js';
import { registerAnswerCache } from './http/plugins/answer-cache.js';
import { RouteIndex } from './http/route-index.js';
import { requestLogger } from './http/request-logger.js';
import { parameterValidatorCompiler } from './http/validation.js';
import { tracingPlugin } from './telemetry/tracing.js';
import { currentTraceId } from './telemetry/spans.js';
import type { AppDeps } from './app/app-deps.js';
import { registerOpenApiDocs } from './app/openapi-docs.js';
import { registerRoutes } from './app/routes.js';
import { registerTransport } from './app/transport.js';

export type { AppDeps } from './app/app-deps.js';

/**
 * The service's pino logger, writing JSON lines to `destination` (stdout by default). Keys never reach
 * the logs: `Authorization` is redacted wherever a request's headers are logged. With tracing on, a line written
 * inside a trace carries its `traceId`.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.headers.authorization'], censor: '[redacted]' },
    // The trace a line was written in, when tracing is on: an operator goes from a log line to its trace.
    mixin: () => {
      const traceId = currentTraceId();
      return traceId ? { traceId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A request's URL as logged: a key given as `access_token` (the change stream, from a browser) is redacted. */
export function redactedUrl(url: string): string {
  return url.replace(/([?&]access_token=)[^&#]*/gi, '$1[redacted]');
}

/**
 * One log line a request, at a level that depends on the answer: debug for a quick success, info for a
 * client error or an answer slower than `slowMs` milliseconds, error for a server error. (Fastify's
 * default, two info lines a request, cost about a tenth of the throughput.)
 */
class LeveledRequestLog extends LogController {
  constructor(private readonly slowMs: number) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    const level = error || status >= 500 ? 'error' : status >= 400 || ms >= this.slowMs ? 'info' : 'debug';
    if (!(request.log as unknown as Pick<Logger, 'isLevelEnabled'>).isLevelEnabled(level)) return;
    const facts = {
      method: request.method,
      url: redactedUrl(request.url),
      statusCode: status,
      ms: Math.round(ms * 10) / 10,
      ...(error ? { err: error } : {}),
    };
    request.log[level](facts, ms >= this.slowMs ? 'slow request answered' : 'request answered');
  }
}

/**
 * Builds the Fastify app: strict query validation (unknown parameters rejected, all errors reported),
 * problem+json errors, X-Request-Id on every answer, auth, the /v1 routes, /v1/openapi.json and /docs.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  let requestCounter = 0;
  // This process's part of each request id: when it started, in base 36; the count follows.
  const idPrefix = `req-${Date.now().toString(36)}-`;
  const app = Fastify({
    // Typed as Fastify's base logger so plugins and routes see the usual FastifyInstance.
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: deps.config.trustProxy,
    logController: new LeveledRequestLog(deps.config.slowRequestMs),
    childLoggerFactory: requestLogger,
    // Path parameters up to this length reach validation (a 400 naming the parameter); longer ones are 414.
    routerOptions: { maxParamLength: 500 },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : idPrefix + (++requestCounter).toString(36);
    },
  });
  // First, so that every route and hook after it is traced (tracing on: OTEL_EXPORTER_OTLP_ENDPOINT).
  const tracing = tracingPlugin();
  if (tracing) await app.register(tracing);
  app.setValidatorCompiler(parameterValidatorCompiler());
  const routes = new RouteIndex();
  routes.watch(app);
  app.decorate('routeIndex', routes);
  // A preflight carries no credentials (Fetch standard): routes answering OPTIONS only are public.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => m === 'OPTIONS')) route.config = { ...route.config, access: 'public' };
  });
  await registerTransport(app, deps);
  await registerOpenApiDocs(app);
  registerErrorHandling(app, routes);
  if (deps.apiOnly) registerFirstSyncGate(app, { hasData: () => deps.listings.hasActive(), retryAfterSeconds: 10 });
  registerAuth(app, { keys: deps.keys, resolver: deps.keyResolver, config: deps.config, clock: deps.clock });
  registerRateLimits(app, { config: deps.config, limiters: deps.limiters, quotas: deps.quotas, clock: deps.clock, logger: deps.logger });
  // After auth and rate limits (a reused answer is counted and limited like any other).
  if (deps.config.answerCacheBytes > 0) {
    registerAnswerCache(app, {
      writeCounts: () => deps.reads.writeCounts,
      readCacheSeconds: deps.config.readCacheSeconds,
      maxBytes: deps.config.answerCacheBytes,
      clock: deps.clock,
      metrics: deps.metrics,
    });
  }
  const documentOf = registerRoutes(app, deps);
  app.get('/v1/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => documentOf());
  await app.ready();
  return app;
}
