import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import type { Mirror } from './freshness/mirror.js';
import { registerAuth } from './http/plugins/auth.js';
import { registerErrorHandling } from './http/plugins/errors.js';
import { registerRateLimits, type PlanLimiters } from './http/plugins/rate-limits.js';
import { registerAreaRoutes } from './http/routes/areas.js';
import { registerBuildingRoutes } from './http/routes/building.js';
import { registerHealthRoutes } from './http/routes/health.js';
import { registerPropertyRoutes } from './http/routes/property.js';
import { registerSearchRoutes } from './http/routes/search.js';
import { registerUsageRoutes } from './http/routes/usage.js';
import { AreaSchema, BuildingSchema } from './http/schemas/building.js';
import { SHARED_SCHEMAS } from './http/schemas/common.js';
import { ListingDetail, ListingSummary } from './http/schemas/listing.js';
import type { KeysRepository } from './store/keys-repository.js';
import type { QuotaRepository } from './store/quota-repository.js';
import type { ScopesRepository } from './store/scopes-repository.js';

/** What the HTTP layer needs; main.ts and the tests assemble it (see runtime.ts). */
export interface AppDeps {
  config: Config;
  mirror: Mirror;
  keys: KeysRepository;
  quotas: QuotaRepository;
  limiters: PlanLimiters;
  scopes: ScopesRepository;
  circuitState: () => string;
  /** When a scope whose last success was at the given instant is next due (null: scheduler off). */
  nextRefreshAt: (lastSuccessAt: string | null) => string | null;
  clock: () => Date;
  /** Logger for requests and the app's own messages (create it with {@link createLogger}). */
  logger: Logger;
}

/**
 * The service's pino logger, writing JSON lines to `destination` (stdout by default). Keys never reach
 * the logs: `Authorization` is redacted wherever a request's headers are logged.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.headers.authorization'], censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}

export const API_DESCRIPTION = `Read-only JSON API for New York City sale and rental listings, buildings and areas, served from a local
mirror of an upstream listings site.

**Freshness.** Every answer carries meta.dataAge (UTC), meta.source and meta.freshnessThreshold (seconds). Stored data
within the threshold is \`cached\`; older data is still answered, as \`stale\` when this request started a background
refresh (meta.refreshTriggered true) or \`refreshing\` when one is already running. A failed refresh keeps the stored
data. A single listing or building not yet mirrored is fetched from upstream while you wait (502/504 if it fails).

**Plans.** Free, Starter, Pro, Business cap perPage at 10 / 50 / 500 / 500; a larger perPage is clamped and meta.perPage
shows the size in effect. Without a key the two search endpoints answer as Free, limited per client IP; the other
endpoints need \`Authorization: Bearer SERVICE_<uuid>\`.

**Rate limits.** Per minute: Free 10, Starter 30, Pro 60, Business 120; per calendar month (UTC): 100 / 5,000 / 25,000 /
100,000 (configurable). Counted per key, or per client IP without one. Every limited answer carries \`RateLimit-Policy\`,
\`RateLimit\` (IETF draft structured fields), \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`
(seconds until the minute window resets). GET /v1/usage shows a key's plan, limits and usage without counting.

**Errors** are RFC 9457 application/problem+json with a stable \`code\` and, for bad parameters, \`errors[]\` naming each one.
Unknown query parameters are rejected.

**Units.** Prices in US dollars (rent a month; asking price for sales), areas in square feet, distances in metres.`;

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
    // Long path parameters reach validation and get a problem+json 400 instead of the router's 414.
    routerOptions: { maxParamLength: 2000 },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : `req-${Date.now().toString(36)}-${(++requestCounter).toString(36)}`;
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, allErrors: true, useDefaults: false } },
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  for (const schema of [...SHARED_SCHEMAS, ListingSummary, ListingDetail, BuildingSchema, AreaSchema]) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'nyc-listings', version: '1.0.0', description: API_DESCRIPTION },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'SERVICE_<uuid v4> API key.' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  registerErrorHandling(app);
  registerAuth(app, { keys: deps.keys, config: deps.config, clock: deps.clock });
  registerRateLimits(app, { config: deps.config, limiters: deps.limiters, quotas: deps.quotas, clock: deps.clock, logger: deps.logger });
  registerSearchRoutes(app, { mirror: deps.mirror, config: deps.config });
  registerUsageRoutes(app, { config: deps.config, limiters: deps.limiters, quotas: deps.quotas, clock: deps.clock });
  registerPropertyRoutes(app, { mirror: deps.mirror });
  registerBuildingRoutes(app, { mirror: deps.mirror });
  registerAreaRoutes(app, { mirror: deps.mirror });
  registerHealthRoutes(app, { scopes: deps.scopes, circuitState: deps.circuitState, nextRefreshAt: deps.nextRefreshAt });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}
