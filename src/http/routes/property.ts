import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Plan } from '../../config.js';
import type { ReadService } from '../../read/read-service.js';
import { invalidParams, notFound } from '../problem.js';
import { ComparablesMeta, LISTING_ID, problemResponses } from '../schemas/common.js';
import { ListingDetail } from '../../wire/listing.js';
import { fieldsParam, project, sparseFields } from '../sparse-fields.js';

const detailResponse = Type.Object(
  { data: Type.Ref('ListingDetail'), meta: Type.Ref('SingleMeta') },
  { description: 'The listing (active or off the market) and the freshness of its data.' },
);

/** What `url` may be: an optional http(s) scheme and host, then a rental, sale or building path; no spaces or control characters. */
const LISTING_URL_PATTERN = '^([hH][tT][tT][pP][sS]?://[^/\\u0000-\\u0020\\u007f]+)?/?(rental|sale|building)/[^\\u0000-\\u0020\\u007f]+$';

/**
 * The path part of a listing URL on the upstream site: accepts `/rental/123`, `rental/123`, or a full
 * `https://<host>/building/<slug>/<unit>` URL; drops query and fragment and a trailing slash.
 */
export function listingPath(url: string): string | null {
  let path = url.trim();
  if (/^https?:\/\//i.test(path)) {
    try {
      path = new URL(path).pathname;
    } catch {
      return null;
    }
  }
  path = path.split(/[?#]/)[0];
  if (!path.startsWith('/')) path = `/${path}`;
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return /^\/(rental|sale|building)\/[^\s]+$/.test(path) ? path : null;
}

/** What these routes read with. */
type RouteDeps = { reads: ReadService; comparablesPlan: Plan };

/** GET /v1/property/{id} and GET /v1/property/by-url (spec 4.3, 4.4), and GET /v1/properties (batch). */
export function registerPropertyRoutes(fastify: FastifyInstance, deps: RouteDeps): void {
  registerGetComparables(fastify, deps);
  registerGetProperties(fastify, deps);
  registerGetPropertyByUrl(fastify, deps);
  registerGetProperty(fastify, deps);
}

/** GET /v1/property/:id/comparables. */
function registerGetComparables(fastify: FastifyInstance, deps: RouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/property/:id/comparables',
    {
      config: { minPlan: deps.comparablesPlan },
      schema: {
        operationId: 'getComparables',
        summary: 'Comparable active listings near a listing',
        description:
          'Active listings of the same kind near the listing, most similar first. The radius widens through 500 m, 1, 2, 5 and 10 km until `limit` are found. ' +
          'similarity (0-100) = 100 x (0.35 price + 0.25 bedrooms + 0.15 bathrooms + 0.15 size + 0.10 distance), each part 0-1: price max(0, 1 - |p - p0| / p0); ' +
          'bedrooms max(0, 1 - |b - b0| / 3); full bathrooms max(0, 1 - |b - b0| / 2); size max(0, 1 - |s - s0| / s0); distance 1 - d / radius; a part unknown on either side counts 0.5. ' +
          `From the ${deps.comparablesPlan} plan up (MIN_PLAN_COMPARABLES).`,
        tags: ['property'],
        params: Type.Object({ id: LISTING_ID }),
        querystring: Type.Object(
          { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'How many, 1-50; default 10.' })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              data: Type.Array(
                Type.Object({
                  listing: Type.Ref('ListingSummary'),
                  distance: Type.Integer({ description: 'Metres from the listing (great-circle).' }),
                  similarity: Type.Number({ description: '0-100, by the formula above.' }),
                }),
              ),
              meta: ComparablesMeta,
            },
            { description: 'The comparables, most similar first, with the freshness of the listing compared.' },
          ),
          ...problemResponses(400, 401, 403, 404, 414, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const { id } = request.params;
      const { limit } = request.query;
      const answer = await deps.reads.comparables(id, limit ?? 10);
      if (!answer) throw notFound(`No listing with id ${id} in the mirror.`);
      return { data: answer.items, meta: { ...answer.freshness, radius: answer.radius } };
    },
  );
}

/** GET /v1/properties. */
function registerGetProperties(fastify: FastifyInstance, deps: RouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/properties',
    {
      config: { answerCache: true },
      schema: {
        operationId: 'getProperties',
        summary: 'Several listings by upstream id (batch)',
        description:
          'Up to 50 listings, answered in the order asked, from the mirror (ids it does not hold are listed in `meta.missing`, not fetched upstream). ' +
          'A batch counts as one request toward the minute limit and the monthly quota.',
        tags: ['property'],
        querystring: Type.Object(
          {
            ids: Type.String({
              pattern: '^[A-Za-z0-9_-]{1,40}(,[A-Za-z0-9_-]{1,40}){0,49}$',
              maxLength: 2100,
              description: 'Comma-separated listing ids, at most 50.',
            }),
            fields: Type.Optional(fieldsParam(ListingDetail)),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              data: Type.Array(Type.Ref('ListingDetail')),
              meta: Type.Object({
                dataAge: Type.String({
                  format: 'date-time',
                  description: 'When the oldest listing answered was last confirmed by the upstream (UTC).',
                }),
                source: Type.Enum(['cached', 'stale', 'refreshing']),
                freshnessThreshold: Type.Integer({ description: 'Freshness threshold in seconds.' }),
                refreshTriggered: Type.Boolean(),
                missing: Type.Array(Type.String(), { description: 'Ids asked for that the mirror does not hold.' }),
              }),
            },
            { description: 'The listings found, in the order asked, and the ids not found.' },
          ),
          ...problemResponses(400, 401, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request, reply) => {
      const { ids } = request.query;
      const keep = sparseFields(request.query.fields, ListingDetail, reply);
      const unique = [...new Set(ids.split(','))];
      const answer = await deps.reads.listingsByIds(unique);
      return { data: answer.listings.map((l) => project(l, keep)), meta: { ...answer.freshness, missing: answer.missing } };
    },
  );
}

/** GET /v1/property/by-url. */
function registerGetPropertyByUrl(fastify: FastifyInstance, deps: RouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/property/by-url',
    {
      config: { answerCache: true },
      schema: {
        operationId: 'getPropertyByUrl',
        summary: 'Listing detail by its URL on the upstream site',
        description:
          'url: the listing path on the upstream site (`/building/<slug>/<unit>`, `/rental/<id>`, `/sale/<id>`), with or without the scheme and host. ' +
          'A `/rental/<id>` or `/sale/<id>` path not yet mirrored is fetched from upstream; other paths are answered from the mirror.',
        tags: ['property'],
        querystring: Type.Object(
          {
            url: Type.String({
              minLength: 1,
              maxLength: 500,
              pattern: LISTING_URL_PATTERN,
              description:
                'Listing URL or path on the upstream site: `/rental/<id>`, `/sale/<id>`, `/building/<slug>/<unit>`, optionally after `https://<host>`.',
            }),
            fields: Type.Optional(fieldsParam(ListingDetail)),
          },
          { additionalProperties: false },
        ),
        response: { 200: detailResponse, ...problemResponses(400, 401, 404, 429, 502, 503, 504) },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request, reply) => {
      const { url } = request.query;
      const keep = sparseFields(request.query.fields, ListingDetail, reply);
      const path = listingPath(url);
      if (!path)
        throw invalidParams([
          { name: 'url', in: 'query', message: 'must be a listing path such as /rental/1545 or /building/<slug>/<unit>' },
        ]);
      const answer = await deps.reads.listingByUrlPath(path);
      if (!answer) throw notFound(`No listing at ${path}.`);
      return { data: project(answer.listing, keep), meta: answer.freshness };
    },
  );
}

/** GET /v1/property/:id. */
function registerGetProperty(fastify: FastifyInstance, deps: RouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/property/:id',
    {
      config: { answerCache: true },
      schema: {
        operationId: 'getProperty',
        summary: 'Listing detail by upstream listing id',
        description:
          'Sale or rental listing detail. Off-market listings still answer, with their status. A listing not yet mirrored is fetched from upstream.',
        tags: ['property'],
        params: Type.Object({ id: LISTING_ID }),
        querystring: Type.Object({ fields: Type.Optional(fieldsParam(ListingDetail)) }, { additionalProperties: false }),
        response: { 200: detailResponse, ...problemResponses(400, 401, 404, 414, 429, 502, 503, 504) },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const keep = sparseFields(request.query.fields, ListingDetail, reply);
      const answer = await deps.reads.listing(id);
      if (!answer) throw notFound(`No listing with id ${id}.`);
      return { data: project(answer.listing, keep), meta: answer.freshness };
    },
  );
}
