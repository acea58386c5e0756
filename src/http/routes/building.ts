import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { CityRecords } from '../../read/city-records.js';
import type { ReadService } from '../../read/read-service.js';
import { notFound } from '../problem.js';
import { problemResponses } from '../schemas/common.js';

/** GET /v1/building/{id} (spec 4.5): by building id or slug. */
export function registerBuildingRoutes(fastify: FastifyInstance, deps: { reads: ReadService; cityRecords: CityRecords }): void {
  // Typed by the route schemas (TypeBox): request.query and request.params need no casts.
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/building/:id',
    {
      schema: {
        operationId: 'getBuilding',
        summary: 'Building detail by id or slug',
        description:
          "Inventories count the building's listings by bedrooms: available (active) and historical (ever seen); the sale inventory's historical figures also count " +
          "the building's recorded sales with consideration (NYC Open Data), under UNKNOWN bedrooms since the city publishes none. " +
          "`nycData` and, where the listing site gives none, `floorCount` are the city's (PLUTO's tax lot at the building's address and ZIP code; council district and hurricane evacuation zone by the building's position): null where unknown.",
        tags: ['building'],
        params: Type.Object({ id: Type.String({ pattern: '^[a-z0-9A-Z_-]{1,120}$', description: 'Building id or slug.' }) }),
        response: {
          200: Type.Object(
            { data: Type.Ref('Building'), meta: Type.Ref('SingleMeta') },
            { description: "The building, its inventories counted from the mirror's listings in it, and freshness." },
          ),
          ...problemResponses(400, 401, 404, 414, 429, 502, 503, 504),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const { id } = request.params;
      const answer = await deps.reads.building(id);
      if (!answer) throw notFound(`No building with id or slug ${id}.`);
      return { data: await deps.cityRecords.withCityFacts(answer.building), meta: answer.freshness };
    },
  );
}
