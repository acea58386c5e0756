import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { ReadService } from '../../read/read-service.js';
import { resolveAreas } from '../area-param.js';
import { invalidParams } from '../problem.js';
import { problemResponses } from '../schemas/common.js';
import { MarketFigures } from '../../wire/market.js';
import { AREA_LIST } from '../../domain/search-filters.js';

const DAY_MS = 86_400_000;

const QUANTILES =
  'Quantiles interpolate linearly between the closest ranks ("type 7": the median of an even count is the mean of the two middle values); ' +
  "figures are rounded to cents and computed from the mirror's active listings.";
const kind = Type.Enum(['rental', 'sale'], { description: 'Rentals or sales.' });

/** GET /v1/market (every keyed plan) and GET /v1/market/history (from `featurePlans.marketHistory` up). */
export function registerMarketRoutes(fastify: FastifyInstance, deps: MarketDeps): void {
  registerGetMarket(fastify, deps);
  registerGetMarketHistory(fastify, deps);
}

type MarketDeps = { reads: ReadService; config: Config; clock: () => Date };

/** GET /v1/market. */
function registerGetMarket(fastify: FastifyInstance, deps: MarketDeps): void {
  // Typed by the route schemas (TypeBox): request.query and request.params need no casts.
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/market',
    {
      schema: {
        operationId: 'getMarket',
        summary: 'Market figures now',
        description: `Active count, median, 25th and 75th percentile price, median price per square foot and days on market, and inventory by bedroom count. ${QUANTILES} Any keyed plan.`,
        tags: ['market'],
        querystring: Type.Object(
          {
            kind,
            areas: Type.Optional(
              Type.String({ ...AREA_LIST, description: 'Areas by id or slug (with the areas below them); the whole city when absent.' }),
            ),
            bedrooms: Type.Optional(
              Type.String({
                pattern: '^([0-9]|10)(,([0-9]|10)){0,10}$',
                description: 'Bedroom counts to include (0 a studio), comma-separated; all when absent.',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            { data: Type.Object({ kind: Type.String(), ...MarketFigures.properties }), meta: Type.Ref('SingleMeta') },
            { description: 'The figures and their freshness.' },
          ),
          ...problemResponses(400, 401, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const q = request.query;
      const { areaIds, boroughs } = resolveAreas(q.areas, await deps.reads.areaTree());
      const bedrooms = q.bedrooms ? [...new Set(q.bedrooms.split(',').map(Number))] : undefined;
      const { figures, freshness } = await deps.reads.market(q.kind, areaIds, boroughs, bedrooms);
      return { data: { kind: q.kind, ...figures }, meta: freshness };
    },
  );
}

/** GET /v1/market/history. */
function registerGetMarketHistory(fastify: FastifyInstance, deps: MarketDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/market/history',
    {
      config: { minPlan: deps.config.featurePlans.marketHistory },
      schema: {
        operationId: 'getMarketHistory',
        summary: 'Daily market figures',
        description:
          `One snapshot a day of the same figures (all bedroom counts), for a borough or the whole city, as the mirror recorded them at its last sync of that day (UTC): history accumulates as the mirror runs. ${QUANTILES} ` +
          `From the ${deps.config.featurePlans.marketHistory} plan up (MIN_PLAN_MARKET_HISTORY).`,
        tags: ['market'],
        querystring: Type.Object(
          {
            kind,
            area: Type.Optional(Type.Integer({ enum: [100, 200, 300, 400, 500], description: 'A borough; the whole city when absent.' })),
            from: Type.Optional(Type.String({ format: 'date', description: 'First day (UTC, inclusive); default 30 days before `to`.' })),
            to: Type.Optional(
              Type.String({ format: 'date', description: 'Last day (UTC, inclusive); default today. At most 366 days from `from`.' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              data: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), ...MarketFigures.properties })),
              meta: Type.Ref('SingleMeta'),
            },
            { description: 'The days recorded in the range, oldest first.' },
          ),
          ...problemResponses(400, 401, 403, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const q = request.query;
      const to = q.to ?? deps.clock().toISOString().slice(0, 10);
      const from = q.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 30 * DAY_MS).toISOString().slice(0, 10);
      const span = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS;
      if (span < 0 || span > 366)
        throw invalidParams([{ name: 'from', in: 'query', message: 'must be on or before `to`, at most 366 days before it' }]);
      const { days, freshness } = await deps.reads.marketHistory(q.kind, q.area ?? 0, from, to);
      return { data: days.map((d) => ({ date: d.day, ...d.figures })), meta: freshness };
    },
  );
}
