import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { NoQuery, problemResponses } from '../schemas/common.js';

/** The part of the OpenAPI document the index reads: each path's operations and their summaries. */
export interface OpenApiOperations {
  paths: Record<string, Record<string, { summary?: string }>>;
}

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

/**
 * GET / and GET /v1: a small index pointing to the docs, the OpenAPI document and each endpoint. Public. The endpoints
 * are the OpenAPI document's operations (read once, at the first request, when every route is registered): a route
 * added to the app is listed here without a list kept by hand.
 */
export function registerIndexRoutes(app: FastifyInstance, deps: { version: string; document: () => OpenApiOperations }): void {
  let index: unknown;
  const indexOf = () =>
    (index ??= {
      name: 'nyc-listings',
      version: deps.version,
      description:
        'Read-only JSON API for New York City sale and rental listings, buildings and areas, served from a local mirror of an upstream listings site.',
      links: { docs: '/docs', openapi: '/v1/openapi.json', health: '/v1/health' },
      endpoints: Object.entries(deps.document().paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, summary: operation.summary ?? '' })),
      ),
    });
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
      async () => indexOf(),
    );
  }
}
