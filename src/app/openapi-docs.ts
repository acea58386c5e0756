import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_DESCRIPTION } from '../http/openapi.js';
import { SHARED_SCHEMAS } from '../http/schemas/common.js';
import { AreaSchema, BuildingSchema } from '../wire/building.js';
import { ListingClusterSchema } from '../wire/cluster.js';
import { Estimate as EstimateSchema, EstimateComparable as EstimateComparableSchema } from '../wire/estimate.js';
import { ListingDetail, ListingSummary } from '../wire/listing.js';
import { RecordedSaleSchema } from '../wire/recorded-sale.js';
import { SERVICE_VERSION } from '../version.js';

/**
 * The shared wire schemas, the OpenAPI 3.1 document's frame (info, tags, security schemes) that every route's
 * schema fills in, and the public docs page at /docs.
 */
export async function registerOpenApiDocs(app: FastifyInstance): Promise<void> {
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
}
