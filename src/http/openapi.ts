import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { PLANS } from '../config.js';
import { FIRST_SYNC_PENDING } from './plugins/first-sync.js';

/**
 * The OpenAPI document's parts that the routes' schemas do not say: the API's description, a real answer and
 * real parameter values for each operation, sparse items, each operation's lowest plan, the answers every
 * operation may give (403 for a key used from another origin, 431, 503 before an API-only instance's first
 * sync) and the headers of each answer. `buildApp` serves the result at /v1/openapi.json.
 */

/** The API's description at the head of the OpenAPI document. */
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
be limited to some operations (by their operation ids): 403 OPERATION_NOT_ALLOWED on the others. Keys are sold at /pricing
(Stripe Checkout): a subscription's key follows its plan at once, keeps working while a payment is retried (\`past_due\`, as
GET /v1/usage says), and is 403 SUBSCRIPTION_INACTIVE once the subscription is canceled, unpaid or paused; /account shows
a key's plan, status and usage, opens the billing portal and rotates the key.

**Rate limits.** Per minute: Free 10, Starter 30, Pro 60, Business 120; per calendar month (UTC): 100 / 5,000 / 25,000 /
100,000 (configurable). Counted per key, or per client IP without one. Every limited answer carries \`RateLimit-Policy\`,
\`RateLimit\` (IETF draft structured fields), \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\`
(seconds until the minute window resets). GET /v1/usage shows a key's plan, limits and usage without counting.

**Errors** are RFC 9457 application/problem+json with a stable \`code\` and, for bad parameters, \`errors[]\` naming each one:
INVALID_PARAMS and BAD_REQUEST 400, MISSING_API_KEY / INVALID_API_KEY / EXPIRED_API_KEY 401, PLAN_REQUIRED / ORIGIN_NOT_ALLOWED / OPERATION_NOT_ALLOWED / SUBSCRIPTION_INACTIVE 403, NOT_FOUND 404 (an unknown path
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
const EXAMPLES_FILE = new URL('../../docs/openapi-examples.json', import.meta.url);

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
          "ORIGIN_NOT_ALLOWED: a publishable key from an origin it does not list; OPERATION_NOT_ALLOWED: a key limited to other operations; SUBSCRIPTION_INACTIVE: the key's subscription is canceled, unpaid or paused (`subscriptionStatus`; see `/account`).",
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
    parameter.example = type === 'integer' || type === 'number' ? Number(value) : type === 'boolean' ? value === 'true' : value;
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
