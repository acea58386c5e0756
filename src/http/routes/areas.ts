import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ReadService } from '../../read/read-service.js';
import type { Area } from '../../domain/area.js';
import { decodeOutline } from '../../domain/outline.js';
import { pageLinks } from '../links.js';
import { notFound } from '../problem.js';
import { problemResponses } from '../schemas/common.js';
import { AreasQuery } from '../schemas/search-query.js';

/** An area on the wire, with its outline as GeoJSON when asked. */
function presentArea(area: Area, withBoundary: boolean) {
  const { outline, ...rest } = area;
  return withBoundary ? { ...rest, boundary: decodeOutline(outline) } : rest;
}

/** GET /v1/areas (spec 4.6): boroughs, sub-boroughs and neighbourhoods, ordered by id; GET /v1/areas/{id}: one, with its outline. */
export function registerAreaRoutes(fastify: FastifyInstance, deps: { reads: ReadService }): void {
  // Typed by the route schemas (TypeBox): request.query and request.params need no casts.
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/areas/:id',
    {
      config: { answerCache: true },
      schema: {
        operationId: 'getArea',
        summary: 'One area, with its outline',
        description: "The area and its outline as a GeoJSON Polygon (decoded from the upstream site's own outline).",
        tags: ['areas'],
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 9_999_999, description: 'Area id from /v1/areas.' }) }),
        response: {
          200: Type.Object(
            { data: Type.Ref('Area'), meta: Type.Ref('SingleMeta') },
            { description: 'The area with its boundary, and the freshness of the area list.' },
          ),
          ...problemResponses(400, 401, 404, 414, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const { id } = request.params;
      const { areas, freshness } = await deps.reads.areas({});
      const area = areas.find((a) => a.id === id);
      if (!area) throw notFound(`No area with id ${id} (see /v1/areas).`);
      return { data: presentArea(area, true), meta: freshness };
    },
  );

  app.get(
    '/v1/areas',
    {
      config: { answerCache: true },
      schema: {
        operationId: 'listAreas',
        summary: 'Areas and neighbourhoods',
        description:
          'The five boroughs (level 0; ids 100 Manhattan, 200 Brooklyn, 300 Queens, 400 Bronx, 500 Staten Island) and every NYC area below them. ' +
          "Level 1 is any area with areas below it, level 2 every other. Other area ids are the upstream site's own.",
        tags: ['areas'],
        querystring: AreasQuery,
        response: {
          200: Type.Object(
            { data: Type.Array(Type.Ref('Area')), meta: Type.Ref('ListMeta') },
            { description: 'The areas asked for, ordered by id (by match with `q`), with the freshness of the area list and pagination.' },
          ),
          ...problemResponses(400, 401, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const q = request.query;
      const listed = await deps.reads.areas({ level: q.level, borough: q.borough });
      const { freshness } = listed;
      let { areas } = listed;
      if (q.q !== undefined) {
        // The name search's order (whole-name matches first), within the level and borough asked for.
        const kept = new Set(areas.map((a) => a.id));
        areas = (await deps.reads.areaTree()).searchByName(q.q).filter((a) => kept.has(a.id));
      }
      const page = q.page ?? 1;
      const perPage = q.perPage ?? 500;
      return {
        data: areas.slice((page - 1) * perPage, page * perPage).map((a) => presentArea(a, q.include === 'boundary')),
        meta: { ...freshness, total: areas.length, page, perPage, links: pageLinks('/v1/areas', request.url, page, perPage, areas.length) },
      };
    },
  );
}
