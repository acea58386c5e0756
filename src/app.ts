import compress from '@fastify/compress';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import zlib from 'node:zlib';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import type { ReadService } from './read/read-service.js';
import { registerFirstSyncGate } from './http/plugins/first-sync.js';
import { registerAuth } from './http/plugins/auth.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/plugins/errors.js';
import { registerRateLimits } from './http/plugins/rate-limits.js';
import { registerAnswerCache } from './http/plugins/answer-cache.js';
import type { PlanLimiters } from './access/plan-limiters.js';
import type { QuotaMeter } from './access/quota-meter.js';
import type { KeyResolver } from './access/key-resolver.js';
import { registerAreaRoutes } from './http/routes/areas.js';
import { registerBuildingRoutes } from './http/routes/building.js';
import { registerCaching } from './http/plugins/caching.js';
import { registerHealthRoutes, type BackgroundJobs } from './http/routes/health.js';
import type { Metrics } from './metrics/metrics.js';
import { type OpenApiOperations, registerIndexRoutes } from './http/routes/index.js';
import { registerMarketRoutes } from './http/routes/market.js';
import { registerChangesRoutes } from './http/routes/changes.js';
import { registerPropertyRoutes } from './http/routes/property.js';
import { registerEstimateRoutes } from './http/routes/estimate.js';
import { registerSearchRoutes } from './http/routes/search.js';
import { registerUsageRoutes } from './http/routes/usage.js';
import { registerRecordedSalesRoutes } from './http/routes/recorded-sales.js';
import { registerAgentRoutes } from './agents/routes.js';
import { registerExploreRoutes } from './http/routes/explore.js';
import { registerBillingRoutes } from './http/routes/billing.js';
import { registerAccountRoutes } from './http/routes/account.js';
import type { Billing } from './billing/billing.js';
import type { CityRecords } from './read/city-records.js';
import { RecordedSaleSchema } from './wire/recorded-sale.js';
import { AreaSchema, BuildingSchema } from './wire/building.js';
import { SHARED_SCHEMAS } from './http/schemas/common.js';
import { ListingClusterSchema } from './wire/cluster.js';
import { ListingDetail, ListingSummary } from './wire/listing.js';
import { Estimate as EstimateSchema, EstimateComparable as EstimateComparableSchema } from './wire/estimate.js';
import { RouteIndex } from './http/route-index.js';
import { requestLogger } from './http/request-logger.js';
import { parameterValidatorCompiler } from './http/validation.js';
import type { KeysRepository } from './store/keys-repository.js';
import type { ChangeTail } from './notify/change-tail.js';
import type { ChangesRepository } from './store/changes-repository.js';
import type { ListingsRepository } from './store/listings-repository.js';
import type { ScopesRepository } from './store/scopes-repository.js';
import type { UpstreamClient } from './upstream/client.js';
import { SERVICE_VERSION } from './version.js';
import { tracingPlugin } from './telemetry/tracing.js';
import { currentTraceId } from './telemetry/spans.js';
import { API_DESCRIPTION, openApiDocument } from './http/openapi.js';

/** What the HTTP layer needs; main.ts and the tests assemble it (see runtime.ts). */
export interface AppDeps {
  config: Config;
  reads: ReadService;
  /** NYC Open Data's records: recorded sales and buildings' tax-lot facts. */
  cityRecords: CityRecords;
  keys: KeysRepository;
  /** Monthly quota counts (in memory, written in batches). */
  quotas: QuotaMeter;
  /** API keys by digest, cached. */
  keyResolver: KeyResolver;
  limiters: PlanLimiters;
  scopes: ScopesRepository;
  listings: ListingsRepository;
  /** The change log the sync writes (GET /v1/changes). */
  changes: ChangesRepository;
  /** Wakes open change streams when the log grows. */
  changeTail: ChangeTail;
  /** The upstream client, for its breaker state and queue in /v1/health. */
  upstream: Pick<UpstreamClient, 'circuitState' | 'queued' | 'blockedUntil' | 'droppedFields'>;
  /** The background jobs' state (crawls, hydration, webhook delivery), for /v1/health. */
  jobs: BackgroundJobs;
  /** Where each request is counted and timed by its matched route (served on METRICS_PORT, never here). */
  metrics?: Metrics;
  /** When a scope whose last success was at the given instant is next due (null: scheduler off). */
  nextRefreshAt: (scope: string, lastSuccessAt: string | null) => string | null;
  /** Plans sold through the subscription provider: /pricing, /billing/..., /account (absent: none of them is served). */
  billing?: Billing;
  /** An API-only instance (`serve --api-only`): 503 UNAVAILABLE on every non-public route until the mirror holds a listing. */
  apiOnly?: boolean;
  clock: () => Date;
  /** Logger for requests and the app's own messages (create it with {@link createLogger}). */
  logger: Logger;
}

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
  for (const schema of [
    ...SHARED_SCHEMAS,
    ListingSummary,
    ListingDetail,
    ListingClusterSchema,
    BuildingSchema,
    AreaSchema,
    RecordedSaleSchema,
    EstimateComparableSchema,
    EstimateSchema,
  ])
    app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'nyc-listings',
        version: SERVICE_VERSION,
        description: API_DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
        contact: { name: 'nyc-listings maintainers', url: 'https://nyc-listings.dev' },
      },
      servers: [{ url: '/', description: 'This service (paths are relative to where it is served).' }],
      tags: [
        { name: 'search', description: 'Active sale and rental listings, every filter and sort.' },
        { name: 'property', description: 'One listing, by upstream id or URL.' },
        { name: 'building', description: 'One building, by id or slug.' },
        { name: 'areas', description: 'Boroughs, sub-boroughs and neighbourhoods.' },
        { name: 'market', description: 'Market figures now, day by day, and of recorded sales month by month.' },
        {
          name: 'recorded sales',
          description: 'What homes actually sold for: NYC Department of Finance recorded sales, via NYC Open Data.',
        },
        { name: 'changes', description: 'What changed in the market, as a feed.' },
        { name: 'meta', description: 'Index, health and usage.' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'SERVICE_<uuid v4> API key.' },
          accessTokenQuery: {
            type: 'apiKey',
            in: 'query',
            name: 'access_token',
            description:
              'The same key as the `access_token` query parameter (RFC 6750, section 2.3): GET /v1/changes/stream only, for EventSource.',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // The docs page and its assets are public: every route registered in this scope is marked so.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, access: 'public' };
    });
    await docs.register(swaggerUi, { routePrefix: '/docs' });
  });

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
  registerSearchRoutes(app, { reads: deps.reads, config: deps.config });
  const billing = deps.billing;
  registerUsageRoutes(app, {
    config: deps.config,
    limiters: deps.limiters,
    quotas: deps.quotas,
    clock: deps.clock,
    subscriptionOf: async (keyId) => {
      const key = await deps.keys.findById(keyId);
      const subscription = key && billing ? await billing.subscriptionOf(key) : undefined;
      return key && subscription
        ? {
            status: key.subscription_status ?? subscription.status,
            currentPeriodEnd: subscription.current_period_end,
            cancelAt: subscription.cancel_at,
          }
        : null;
    },
  });
  registerPropertyRoutes(app, { reads: deps.reads, comparablesPlan: deps.config.featurePlans.comparables });
  registerEstimateRoutes(app, { reads: deps.reads, cityRecords: deps.cityRecords, plan: deps.config.featurePlans.estimates });
  registerBuildingRoutes(app, { reads: deps.reads, cityRecords: deps.cityRecords });
  registerRecordedSalesRoutes(app, {
    cityRecords: deps.cityRecords,
    areaTree: () => deps.reads.areaTree(),
    findListing: (id) => deps.listings.findById(id),
    config: deps.config,
    clock: deps.clock,
  });
  registerAreaRoutes(app, { reads: deps.reads });
  registerMarketRoutes(app, { reads: deps.reads, config: deps.config, clock: deps.clock });
  registerChangesRoutes(app, {
    changes: deps.changes,
    tail: deps.changeTail,
    reads: deps.reads,
    config: deps.config,
    clock: deps.clock,
    metrics: deps.metrics,
  });
  let document: unknown;
  const documentOf = () => (document ??= openApiDocument(app));
  registerIndexRoutes(app, { version: SERVICE_VERSION, document: documentOf as () => OpenApiOperations });
  registerAgentRoutes(app);
  registerExploreRoutes(app);
  if (billing) {
    registerBillingRoutes(app, { billing, config: deps.config });
    registerAccountRoutes(app, { billing, keys: deps.keys, quotas: deps.quotas, config: deps.config, clock: deps.clock });
  }
  registerHealthRoutes(app, {
    scopes: deps.scopes,
    listings: deps.listings,
    upstream: deps.upstream,
    jobs: deps.jobs,
    nextRefreshAt: deps.nextRefreshAt,
  });
  app.get('/v1/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => documentOf());
  await app.ready();
  return app;
}
