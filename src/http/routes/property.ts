import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Mirror } from '../../freshness/mirror.js';
import { invalidParams, notFound } from '../problem.js';
import { problemResponses } from '../schemas/common.js';

const detailResponse = Type.Object({ data: Type.Ref('ListingDetail'), meta: Type.Ref('SingleMeta') });
const ID = Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$', description: "The upstream site's listing id." });

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

/** GET /v1/property/{id} and GET /v1/property/by-url (spec 4.3, 4.4). */
export function registerPropertyRoutes(app: FastifyInstance, deps: { mirror: Mirror }): void {
  app.get(
    '/v1/property/by-url',
    {
      schema: {
        summary: 'Listing detail by its URL on the upstream site',
        description:
          'url: the listing path on the upstream site (`/building/<slug>/<unit>`, `/rental/<id>`, `/sale/<id>`), with or without the scheme and host. ' +
          'A `/rental/<id>` or `/sale/<id>` path not yet mirrored is fetched from upstream; other paths are answered from the mirror.',
        tags: ['property'],
        querystring: Type.Object(
          { url: Type.String({ minLength: 1, maxLength: 500, description: 'Listing URL or path on the upstream site.' }) },
          { additionalProperties: false },
        ),
        response: { 200: detailResponse, ...problemResponses(400, 401, 404, 429, 502, 504) },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const { url } = request.query as { url: string };
      const path = listingPath(url);
      if (!path) throw invalidParams([{ name: 'url', in: 'query', message: 'must be a listing path such as /rental/1545 or /building/<slug>/<unit>' }]);
      const answer = await deps.mirror.listingByUrlPath(path);
      if (!answer) throw notFound(`No listing at ${path}.`);
      return { data: answer.listing, meta: answer.freshness };
    },
  );

  app.get(
    '/v1/property/:id',
    {
      schema: {
        summary: 'Listing detail by upstream listing id',
        description: 'Sale or rental listing detail. Off-market listings still answer, with their status. A listing not yet mirrored is fetched from upstream.',
        tags: ['property'],
        params: Type.Object({ id: ID }),
        response: { 200: detailResponse, ...problemResponses(400, 401, 404, 429, 502, 504) },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const answer = await deps.mirror.listing(id);
      if (!answer) throw notFound(`No listing with id ${id}.`);
      return { data: answer.listing, meta: answer.freshness };
    },
  );
}
