import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { AreaTree } from '../../domain/area.js';
import type { CityRecords } from '../../read/city-records.js';
import { RecordedSalesMonth } from '../../wire/recorded-sale.js';
import { recordedSaleAreaFilter } from '../area-param.js';
import { invalidParams } from '../problem.js';
import { problemResponses } from '../schemas/common.js';
import { commonFilters, queryObject } from '../schemas/search-query.js';
import { MONTH_PATTERN } from '../validation.js';

/** The longest span of monthly figures one request may ask for. */
const MAX_MONTHS = 240;
const month = (d: Date) => d.toISOString().slice(0, 7);
const monthsBetween = (from: string, to: string) =>
  (Number(to.slice(0, 4)) - Number(from.slice(0, 4))) * 12 + Number(to.slice(5, 7)) - Number(from.slice(5, 7));

/** GET /v1/market/recorded-sales: recorded sales' monthly figures, from `featurePlans.marketHistory` up. */
export function registerRecordedSalesHistoryRoute(
  fastify: FastifyInstance,
  deps: {
    cityRecords: CityRecords;
    areaTree: () => Promise<AreaTree>;
    config: Config;
    clock: () => Date;
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/market/recorded-sales',
    {
      config: { minPlan: deps.config.featurePlans.marketHistory },
      schema: {
        operationId: 'getRecordedSalesHistory',
        summary: 'Monthly figures of recorded sales',
        description:
          'Per month: the count of recorded sales, their median price and median price per square foot (over sales of known size), transfers without consideration left out; ' +
          'every month of the range listed, one without sales with count 0. Medians interpolate between the two middle values of an even count. Beside the daily listing snapshots of ' +
          `/v1/market/history, which accumulate as the mirror runs, these reach back to 2016. From the ${deps.config.featurePlans.marketHistory} plan up (MIN_PLAN_MARKET_HISTORY).`,
        tags: ['market'],
        querystring: queryObject({
          areas: Type.String({
            ...commonFilters.areas,
            description:
              'Comma-separated area ids: a borough counts every sale in it, a smaller area the sales positioned in it; the whole city when absent.',
          }),
          from: Type.String({
            pattern: MONTH_PATTERN,
            description: 'First month, YYYY-MM (1900-01 to 2100-12); default 11 months before `to`.',
          }),
          to: Type.String({
            pattern: MONTH_PATTERN,
            description: `Last month, YYYY-MM (1900-01 to 2100-12); default this month (UTC). At most ${MAX_MONTHS} months after \`from\`.`,
          }),
        }),
        response: {
          200: Type.Object(
            { data: Type.Array(RecordedSalesMonth), meta: Type.Ref('SingleMeta') },
            { description: 'The months of the range, oldest first.' },
          ),
          ...problemResponses(400, 401, 403, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const q = request.query;
      const to = q.to ?? month(deps.clock());
      const from =
        q.from ??
        (() => {
          const d = new Date(`${to}-01T00:00:00Z`);
          d.setUTCMonth(d.getUTCMonth() - 11);
          return month(d);
        })();
      const span = monthsBetween(from, to);
      if (span < 0 || span >= MAX_MONTHS)
        throw invalidParams([
          { name: 'from', in: 'query', message: `must be on or before \`to\`, at most ${MAX_MONTHS - 1} months before it` },
        ]);
      const { months, freshness } = await deps.cityRecords.monthly(recordedSaleAreaFilter(q.areas, await deps.areaTree()), from, to);
      return { data: months, meta: freshness };
    },
  );
}
