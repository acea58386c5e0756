import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { NoQuery, problemResponses } from '../schemas/common.js';

const IndexSchema = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  links: Type.Object({
    docs: Type.String({ description: 'The interactive documentation.' }),
    openapi: Type.String({ description: 'The OpenAPI 3.1 document.' }),
    health: Type.String(),
  }),
  endpoints: Type.Array(Type.Object({ method: Type.String(), path: Type.String(), summary: Type.String() })),
});

/** GET / and GET /v1: a small index pointing to the docs, the OpenAPI document and each endpoint. Public. */
export function registerIndexRoutes(app: FastifyInstance, deps: { version: string }): void {
  const endpoints = [
    ['/v1/search/sales', 'Search sale listings'],
    ['/v1/search/rentals', 'Search rental listings'],
    ['/v1/property/{id}', 'Listing detail by upstream listing id'],
    ['/v1/property/by-url?url=', 'Listing detail by its URL on the upstream site'],
    ['/v1/property/{id}/comparables', 'Comparable active listings near a listing'],
    ['/v1/properties?ids=', 'Several listings by upstream id'],
    ['/v1/building/{id}', 'Building detail by id or slug'],
    ['/v1/areas', 'Areas and neighbourhoods'],
    ['/v1/areas/{id}', 'One area, with its outline'],
    ['/v1/market', 'Market figures now'],
    ['/v1/market/history', 'Daily market figures'],
    ['/v1/changes?since=', 'Changes to listings, as a feed'],
    ['/v1/usage', 'Plan, limits and usage of the calling key'],
    ['/v1/health', 'Service health'],
  ].map(([path, summary]) => ({ method: 'GET', path, summary }));
  const index = {
    name: 'nyc-listings',
    version: deps.version,
    description:
      'Read-only JSON API for New York City sale and rental listings, buildings and areas, served from a local mirror of an upstream listings site.',
    links: { docs: '/docs', openapi: '/v1/openapi.json', health: '/v1/health' },
    endpoints,
  };
  for (const [url, operationId] of [
    ['/', 'getRoot'],
    ['/v1', 'getIndex'],
  ] as const) {
    app.get(
      url,
      {
        config: { access: 'public' },
        schema: {
          operationId,
          summary: 'Index of the API',
          description: 'Name, version and links to the documentation and every endpoint. No key needed.',
          tags: ['meta'],
          security: [],
          querystring: NoQuery,
          response: { 200: { ...IndexSchema, description: 'The index.' }, ...problemResponses(400) },
        },
      },
      async () => index,
    );
  }
}
