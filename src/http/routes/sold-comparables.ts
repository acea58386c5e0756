import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { CityRecords } from '../../read/city-records.js';
import type { ListingRow } from '../../store/listing-rows.js';
import { invalidParams, notFound } from '../problem.js';
import { ComparablesMeta, LISTING_ID, problemResponses } from '../schemas/common.js';
import { queryObject } from '../schemas/search-query.js';

/** GET /v1/property/:id/sold-comparables: recorded sales near a sale listing, from `featurePlans.comparables` up. */
export function registerSoldComparablesRoute(
  fastify: FastifyInstance,
  deps: {
    cityRecords: CityRecords;
    findListing: (id: string) => Promise<ListingRow | undefined>;
    config: Config;
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/property/:id/sold-comparables',
    {
      config: { minPlan: deps.config.featurePlans.comparables },
      schema: {
        operationId: 'getSoldComparables',
        summary: 'Recorded sales near a sale listing',
        description:
          'What comparable homes near a sale listing actually sold for: recorded sales with consideration (NYC Department of Finance, via NYC Open Data), ' +
          'each marked as a recorded sale, most similar first by the formula of the comparables (a recorded sale has no bedrooms or baths: those parts count 0.5), then newest. ' +
          'The radius widens through 500 m, 1, 2, 5 and 10 km until `limit` are found; only positioned sales can be found. ' +
          `From the ${deps.config.featurePlans.comparables} plan up (MIN_PLAN_COMPARABLES).`,
        tags: ['property', 'recorded sales'],
        params: Type.Object({ id: Type.String({ ...LISTING_ID, description: "The sale listing's id." }) }),
        querystring: queryObject({
          limit: Type.Integer({ minimum: 1, maximum: 50, description: 'How many, 1-50; default 10.' }),
          from: Type.String({ format: 'date', description: 'Only sales dated on or after this day (YYYY-MM-DD).' }),
        }),
        response: {
          200: Type.Object(
            {
              data: Type.Array(
                Type.Object({
                  kind: Type.Literal('recorded-sale', { description: 'Marks a sold comparable (a recorded sale), not a listing.' }),
                  recordedSale: Type.Ref('RecordedSale'),
                  distance: Type.Integer({ description: 'Metres from the listing (great-circle).' }),
                  similarity: Type.Number({ description: "0-100, by the comparables' formula." }),
                }),
              ),
              meta: ComparablesMeta,
            },
            { description: 'The sold comparables, most similar first, with the freshness of the recorded sales.' },
          ),
          ...problemResponses(400, 401, 403, 404, 414, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const { id } = request.params;
      const listing = await deps.findListing(id);
      if (!listing) throw notFound(`No listing with id ${id} in the mirror.`);
      if (listing.kind !== 'sale')
        throw invalidParams([{ name: 'id', in: 'path', message: 'is a rental: sold comparables are for sale listings' }]);
      if (listing.latitude === null || listing.longitude === null) {
        return { data: [], meta: { ...(await deps.cityRecords.recordedSalesFreshness()), radius: null } };
      }
      const found = await deps.cityRecords.soldComparables(
        {
          latitude: listing.latitude,
          longitude: listing.longitude,
          price: Number(listing.price),
          bedroomCount: listing.bedroom_count,
          fullBathroomCount: listing.full_bathroom_count,
          sqft: listing.sqft,
        },
        request.query.limit ?? 10,
        request.query.from,
      );
      return {
        data: found.items.map((c) => ({ kind: 'recorded-sale' as const, ...c })),
        meta: { ...found.freshness, radius: found.radius },
      };
    },
  );
}
