import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Mirror } from '../../freshness/mirror.js';
import { pageLinks } from '../links.js';
import { problemResponses } from '../schemas/common.js';
import { AreasQuery } from '../schemas/search-query.js';

/** GET /v1/areas (spec 4.6): boroughs, sub-boroughs and neighbourhoods, ordered by id. */
export function registerAreaRoutes(app: FastifyInstance, deps: { mirror: Mirror }): void {
  app.get(
    '/v1/areas',
    {
      schema: {
        summary: 'Areas and neighbourhoods',
        description:
          'The five boroughs (level 0; ids 100 Manhattan, 200 Brooklyn, 300 Queens, 400 Bronx, 500 Staten Island) and every NYC area below them. ' +
          'Level 1 is any area with areas below it, level 2 every other. Other area ids are the upstream site\'s own.',
        tags: ['areas'],
        querystring: AreasQuery,
        response: {
          200: Type.Object({ data: Type.Array(Type.Ref('Area')), meta: Type.Ref('ListMeta') }),
          ...problemResponses(400, 401, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const q = request.query as { level?: number; borough?: number; page?: number; perPage?: number };
      const { areas, freshness } = await deps.mirror.areas({ level: q.level, borough: q.borough });
      const page = q.page ?? 1;
      const perPage = q.perPage ?? 500;
      return {
        data: areas.slice((page - 1) * perPage, page * perPage),
        meta: { ...freshness, total: areas.length, page, perPage, links: pageLinks('/v1/areas', request.url, page, perPage, areas.length) },
      };
    },
  );
}
