import compress from '@fastify/compress';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { readFileSync } from 'node:fs';
import zlib from 'node:zlib';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import { PLANS, type Config } from './config.js';
import type { Mirror } from './read/mirror.js';
import { FIRST_SYNC_PENDING, registerFirstSyncGate } from './http/plugins/first-sync.js';
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
import { registerIndexRoutes } from './http/routes/index.js';
import { registerMarketRoutes } from './http/routes/market.js';
import { registerChangesRoutes } from './http/routes/changes.js';
import { registerPropertyRoutes } from './http/routes/property.js';
import { registerSearchRoutes } from './http/routes/search.js';
import { registerUsageRoutes } from './http/routes/usage.js';
import { registerRecordedSalesRoutes } from './http/routes/recorded-sales.js';
import { registerAgentRoutes } from './agents/routes.js';
import { registerExploreRoutes } from './http/routes/explore.js';
import type { CityRecords } from './read/city-records.js';
import { RecordedSaleSchema } from './wire/recorded-sale.js';
import { AreaSchema, BuildingSchema } from './wire/building.js';
import { SHARED_SCHEMAS } from './http/schemas/common.js';
import { ListingClusterSchema } from './wire/cluster.js';
import { ListingDetail, ListingSummary } from './wire/listing.js';
import { RouteIndex } from './http/route-index.js';
import { parameterValidatorCompiler } from './http/validation.js';
import type { KeysRepository } from './store/keys-repository.js';
import type { ChangeTail } from './notify/change-tail.js';
import type { ChangesRepository } from './store/changes-repository.js';
import type { ListingsRepository } from './store/listings-repository.js';
import type { ScopesRepository } from './store/scopes-repository.js';
import type { UpstreamClient } from './upstream/client.js';
import { SERVICE_VERSION } from './version.js';

/** What the HTTP layer needs; main.ts and the tests assemble it (see runtime.ts). */
export interface AppDeps {
  config: Config;
  mirror: Mirror;
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
  /** An API-only instance (`serve --api-only`): 503 UNAVAILABLE on every non-public route until the mirror holds a listing. */
  apiOnly?: boolean;
  clock: () => Date;
  /** Logger for requests and the app's own messages (create it with {@link createLogger}). */
  logger: Logger;
}

/**
 * The service's pino logger, writing JSON lines to `destination` (stdout by default). Keys never reach
 * the logs: `Authorization` is redacted wherever a request's headers are logged.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.headers.authorization'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

export const API_DESCRIPTION = `Read-only JSON API for New York City sale and rental listings, buildings and areas, served from a local
mirror of an upstream listings site.

**Freshness.** Every answer carries meta.dataAge (UTC), meta.source and meta.freshnessThreshold (seconds). Stored data
within the threshold is \`cached\`; older data is still answered, as \`stale\` when no refresh is running (meta.refreshTriggered
true when this request started one; none starts while the upstream's circuit breaker is open) or \`refreshing\` when one is
already running. A failed refresh keeps the stored data. A single listing or building not yet mirrored is fetched from
upstream while you wait, ahead of background refreshes (502/504 if it fails, 503 if too many lookups already wait).

**Plans.** Free, Starter, Pro, Business cap perPage at 10 / 50 / 500 / 500; a larger perPage is clamped and meta.perPage
shows the size in effect. Without a key the two search endpoints answer as Free, limited per client IP; the other
endpoints need \`Authorization: Bearer SERVICE_<uuid>\`. A publishable key (issued with origins) may be shown in a web page:
it is accepted only from the origins it lists (\`Origin\`, else \`Referer\`), and is 403 ORIGIN_NOT_ALLOWED elsewhere. A key may
be limited to some operations (by their operation ids): 403 OPERATION_NOT_ALLOWED on the others.

**Rate limits.** Per minute: Free 10, Starter 30, Pro 60, Business 120; per calendar month (UTC): 100 / 5,000 / 25,000 /
100,000 (configurable). Counted per key, or per client IP without one. Every limited answer carries \`RateLimit-Policy\`,
\`RateLimit\` (IETF draft structured fields), \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`
(seconds until the minute window resets). GET /v1/usage shows a key's plan, limits and usage without counting.

**Errors** are RFC 9457 application/problem+json with a stable \`code\` and, for bad parameters, \`errors[]\` naming each one:
INVALID_PARAMS and BAD_REQUEST 400, MISSING_API_KEY / INVALID_API_KEY / EXPIRED_API_KEY 401, PLAN_REQUIRED / ORIGIN_NOT_ALLOWED / OPERATION_NOT_ALLOWED 403, NOT_FOUND 404 (an unknown path
points to /docs), METHOD_NOT_ALLOWED 405 (with \`Allow\`: every operation is GET or HEAD), PAYLOAD_TOO_LARGE 413, URI_TOO_LONG 414,
RATE_LIMIT_EXCEEDED / QUOTA_EXCEEDED 429, HEADERS_TOO_LARGE 431, INTERNAL_ERROR 500, UPSTREAM_ERROR 502, UPSTREAM_BUSY 503 (too
many lookups waiting for the upstream; \`Retry-After\`), DATABASE_UNAVAILABLE 503 (the mirror's database is restarting or
unreachable; \`Retry-After\`), UPSTREAM_TIMEOUT 504. Unknown query parameters are rejected. Integers are
plain decimal digits (no exponent, hex, \`Infinity\`, spaces or byte-order mark), booleans \`true\` or \`false\`, instants RFC 3339
with \`Z\` or a \`±hh:mm\` offset (normalised to UTC), days \`YYYY-MM-DD\` and months \`YYYY-MM\` of the years 1900 to 2100; a
control character in any parameter is refused.

**Health.** GET /v1/health answers 200 \`ok\`, 200 \`degraded\` (the upstream circuit is open or a scope's latest sync failed:
answers may be stale) or 503 \`unavailable\` (no data to serve).

**Units.** Prices in US dollars (rent a month; asking price for sales), areas in square feet, distances in metres.`;

/** Real answers of the default data set, one a route (`npm run openapi:examples` captures them). */
const EXAMPLES_FILE = new URL('../docs/openapi-examples.json', import.meta.url);

/**
 * The app's OpenAPI document with, for each operation, a real answer of the default data set as the
 * example of its 200 JSON answer (when `docs/openapi-examples.json` has one).
 */
export function openApiDocument(app: FastifyInstance): Record<string, unknown> {
  const document = app.swagger() as {
    paths: Record<string, { get?: { responses?: Record<string, { content?: Record<string, Record<string, unknown>> }> } }>;
  };
  let examples: Record<string, unknown> = {};
  try {
    examples = JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as Record<string, unknown>;
  } catch {
    // no examples captured: the document stands without them
  }
  for (const [route, example] of Object.entries(examples)) {
    const content = document.paths[route]?.get?.responses?.['200']?.content;
    const media = content?.['application/json'] ?? content?.['text/event-stream'];
    if (media) media.examples = { realAnswer: example };
    parameterExamples(document as unknown as OpenApi, route, (example as { summary: string }).summary.replace(/^GET /, ''));
  }
  sparseItems(document as unknown as OpenApi);
  // The lowest plan an operation serves, from the route's own `minPlan`, for clients and for the access test.
  for (const route of app.routeIndex.routes()) {
    const operation = document.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase() as 'get'] as
      | Record<string, unknown>
      | undefined;
    if (operation && route.minPlan) operation['x-min-plan'] = route.minPlan;
    // An API-only instance refuses every non-public route until the worker's first sync (http/plugins/first-sync.ts).
    const responses = operation?.responses as Record<string, { description: string }> | undefined;
    if (responses?.['500'] && route.access !== 'public') {
      responses['503'] = responses['503']
        ? { ...responses['503'], description: `${responses['503'].description} ${FIRST_SYNC_PENDING}` }
        : { ...responses['500'], description: FIRST_SYNC_PENDING };
    }
  }
  // The plans from lowest to highest: what `x-min-plan` is compared against (the map explorer reads it).
  (document as Record<string, unknown>)['x-plans'] = [...PLANS];
  for (const item of Object.values(document.paths)) {
    // Every keyed operation may refuse a publishable key used from another origin.
    const responses = item.get?.responses;
    if (responses?.['401'] && !responses['403'])
      responses['403'] = {
        ...responses['401'],
        description:
          'ORIGIN_NOT_ALLOWED: a publishable key from an origin it does not list; OPERATION_NOT_ALLOWED: a key limited to other operations.',
      } as never;
    // Any request whose head (request line and headers) outgrows Node's limit is refused before routing.
    const problem = responses?.['500'];
    if (responses && problem && !responses['431'])
      responses['431'] = {
        ...problem,
        description:
          'HEADERS_TOO_LARGE: the request line and headers together are larger than the server takes (a very long query string counts).',
      } as never;
  }
  for (const [path, item] of Object.entries(document.paths)) {
    const limited = path.startsWith('/v1/') && path !== '/v1/health' && path !== '/v1/usage';
    for (const [status, response] of Object.entries(item.get?.responses ?? {})) {
      const headers: Record<string, unknown> = { 'X-Request-Id': HEADERS['X-Request-Id'] };
      if (limited) for (const name of RATE_LIMIT_HEADERS) headers[name] = HEADERS[name];
      const stream = path === '/v1/changes/stream';
      if (status === '200' && path.startsWith('/v1/') && !stream)
        for (const name of ['ETag', 'Last-Modified', 'Cache-Control', 'Vary']) headers[name] = HEADERS[name];
      if (status === '200' && /\/v1\/(search|areas$)/.test(path)) headers.Link = HEADERS.Link;
      if (status === '429' || status === '503') headers['Retry-After'] = HEADERS['Retry-After'];
      if (status === '401') headers['WWW-Authenticate'] = HEADERS['WWW-Authenticate'];
      (response as Record<string, unknown>).headers = headers;
    }
  }
  return document;
}

/**
 * Gives each parameter of the operation at `route` the value the example request `url` (a path and query of
 * the default data set) gives it: real ids and filters, so that a generated client's or the docs page's first
 * call finds data. Integers and booleans as such; a parameter the request leaves out gets no example.
 */
function parameterExamples(document: OpenApi, route: string, url: string): void {
  const parameters = document.paths[route]?.get?.parameters;
  if (!parameters) return;
  const request = new URL(url, 'http://localhost');
  const inPath = new RegExp(`^${route.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`).exec(request.pathname)?.groups ?? {};
  for (const parameter of parameters) {
    const text = parameter.in === 'path' ? inPath[parameter.name] : request.searchParams.get(parameter.name);
    if (text === undefined || text === null) continue;
    const type = parameter.schema?.type;
    const value = parameter.in === 'path' ? decodeURIComponent(text) : text;
    parameter.example = type === 'integer' ? Number(value) : type === 'boolean' ? value === 'true' : value;
  }
}

interface OpenApi {
  paths: Record<
    string,
    {
      get?: {
        parameters?: { name: string; in?: string; schema?: { type?: string }; example?: unknown }[];
        // biome-ignore lint/suspicious/noExplicitAny: a response schema is any JSON Schema, walked by path.
        responses?: Record<string, { content?: Record<string, { schema?: Record<string, any> }> }>;
      };
    }
  >;
  components: { schemas: Record<string, Record<string, unknown>> };
}

/**
 * Documents sparse answers: an operation with a `fields` parameter may answer items holding only some
 * fields, so its items are `anyOf` the whole schema and `<Name>Fields` (the same properties, only `id`
 * required). The serializer keeps the whole schema (fast); this is the document's promise only.
 */
function sparseItems(document: OpenApi): void {
  const sparse = (name: string) => {
    const id = `${name}Fields`;
    document.components.schemas[id] ??= {
      ...document.components.schemas[name],
      required: ['id'],
      description: `${name} with only the fields asked for (\`fields=\`), and id.`,
    };
    return { anyOf: [{ $ref: `#/components/schemas/${name}` }, { $ref: `#/components/schemas/${id}` }] };
  };
  for (const item of Object.values(document.paths)) {
    if (!item.get?.parameters?.some((p) => p.name === 'fields')) continue;
    const data = item.get.responses?.['200']?.content?.['application/json']?.schema?.properties?.data;
    const holder = data?.items ?? data;
    const ref = /^#\/components\/schemas\/(ListingSummary|ListingDetail)$/.exec(holder?.$ref ?? '');
    if (!ref) continue;
    if (data.items) data.items = sparse(ref[1]);
    else item.get.responses!['200'].content!['application/json'].schema!.properties.data = sparse(ref[1]);
  }
}

const header = (description: string, type: 'string' | 'integer' = 'string') => ({ description, schema: { type } });
/** The response headers the service sends, as the OpenAPI document describes them. */
const HEADERS: Record<string, unknown> = {
  'X-Request-Id': header("The request's id (the caller's own when it sent a plain one); errors are logged with it."),
  'RateLimit-Policy': header('IETF draft structured field: `"per-minute";q=<limit>;w=60`.'),
  RateLimit: header('IETF draft structured field: `"per-minute";r=<remaining>;t=<seconds to reset>`.'),
  'X-RateLimit-Limit': header('Requests a minute the plan allows.', 'integer'),
  'X-RateLimit-Remaining': header('Requests left in this minute.', 'integer'),
  'X-RateLimit-Reset': header('Seconds until the minute window resets.', 'integer'),
  ETag: header('Strong entity tag of the answer: send it back in If-None-Match for a 304 (which counts toward no limit).'),
  'Last-Modified': header('meta.dataAge as an HTTP date.'),
  'Cache-Control': header('`private, max-age=<seconds left in the freshness window>`.'),
  Vary: header('`Authorization, Accept-Encoding`.'),
  Link: header('RFC 8288 pagination links: first, prev, next, last (as meta.links).'),
  'Retry-After': header('Seconds to wait before retrying.', 'integer'),
  'WWW-Authenticate': header('`Bearer`, or `Bearer error="invalid_token"` for a bad key.'),
};
const RATE_LIMIT_HEADERS = ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

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
    if (!(request.log as unknown as Logger).isLevelEnabled(level)) return;
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
  const app = Fastify({
    // Typed as Fastify's base logger so plugins and routes see the usual FastifyInstance.
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: deps.config.trustProxy,
    logController: new LeveledRequestLog(deps.config.slowRequestMs),
    // Path parameters up to this length reach validation (a 400 naming the parameter); longer ones are 414.
    routerOptions: { maxParamLength: 500 },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given)
        ? given
        : `req-${Date.now().toString(36)}-${(++requestCounter).toString(36)}`;
    },
  });
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
    ],
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
    reply.header('X-Request-Id', request.id);
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
      versions: () => deps.mirror.writeVersion,
      ttlSeconds: deps.config.readCacheSeconds,
      maxBytes: deps.config.answerCacheBytes,
      clock: deps.clock,
      metrics: deps.metrics,
    });
  }
  registerSearchRoutes(app, { mirror: deps.mirror, config: deps.config });
  registerUsageRoutes(app, { config: deps.config, limiters: deps.limiters, quotas: deps.quotas, clock: deps.clock });
  registerPropertyRoutes(app, { mirror: deps.mirror, comparablesPlan: deps.config.featurePlans.comparables });
  registerBuildingRoutes(app, { mirror: deps.mirror, cityRecords: deps.cityRecords });
  registerRecordedSalesRoutes(app, {
    cityRecords: deps.cityRecords,
    areaTree: () => deps.mirror.areaTree(),
    findListing: (id) => deps.listings.findById(id),
    config: deps.config,
    clock: deps.clock,
  });
  registerAreaRoutes(app, { mirror: deps.mirror });
  registerMarketRoutes(app, { mirror: deps.mirror, config: deps.config, clock: deps.clock });
  registerChangesRoutes(app, {
    changes: deps.changes,
    tail: deps.changeTail,
    mirror: deps.mirror,
    config: deps.config,
    clock: deps.clock,
    metrics: deps.metrics,
  });
  registerIndexRoutes(app, { version: SERVICE_VERSION });
  registerAgentRoutes(app);
  registerExploreRoutes(app);
  registerHealthRoutes(app, {
    scopes: deps.scopes,
    listings: deps.listings,
    upstream: deps.upstream,
    jobs: deps.jobs,
    nextRefreshAt: deps.nextRefreshAt,
  });
  let document: unknown;
  app.get('/v1/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => (document ??= openApiDocument(app)));
  await app.ready();
  return app;
}
