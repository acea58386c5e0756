import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Plan } from '../../config.js';
import { parseAddress } from '../../domain/city-records.js';
import type { AddressPlace, CityRecords } from '../../read/city-records.js';
import type { ReadService } from '../../read/read-service.js';
import type { GeoPoint } from '../../wire/common.js';
import { invalidParams, notFound, Problem } from '../problem.js';
import { LISTING_ID, problemResponses } from '../schemas/common.js';

/** The most bedrooms (and bathrooms) an estimate of a property not listed may be asked for: a 400 above. */
export const MOST_ROOMS = 20;

const METHOD =
  'Comparables are active listings of the same kind, the property itself and every copy of its listing (same point, layout and price) left out. ' +
  'Rentals: the 10 nearest with the same bedrooms and bathrooms within 2 km, weighted (1 / (1 + d / 10 m))², so the same building weighs most, ' +
  'and up to 5 within 25 m with the same bedrooms and other bathrooms at 0.3 of that weight. ' +
  'Sales: with a known size, the 10 nearest of the same building type with a known size within 5 km, each price per square foot times the size, ' +
  'weighted (1 / (1 + d / 1 km))² x exp(-|ln(size ratio)|); otherwise the same bedrooms and building type. ' +
  'The estimate is the weighted median of the adjusted prices; the 80 % interval is calibrated on held-out listings; ' +
  'fewer than 3 comparables: `estimate` null with the reason. Measured error: docs/estimates.md (`nyc-listings estimate backtest`).';

const estimateResponse = Type.Object(
  { data: Type.Ref('Estimate'), meta: Type.Ref('SingleMeta') },
  { description: 'The estimate and the freshness of the listings it was made from.' },
);

/** What these routes read with. */
type RouteDeps = { reads: ReadService; cityRecords: CityRecords; plan: Plan };

/** GET /v1/property/{id}/estimate and GET /v1/estimate: what a property is worth (docs/estimates.md). */
export function registerEstimateRoutes(fastify: FastifyInstance, deps: RouteDeps): void {
  registerGetPropertyEstimate(fastify, deps);
  registerGetEstimate(fastify, deps);
}

/** GET /v1/property/:id/estimate. */
function registerGetPropertyEstimate(fastify: FastifyInstance, deps: RouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/property/:id/estimate',
    {
      config: { minPlan: deps.plan, answerCache: true },
      schema: {
        operationId: 'getPropertyEstimate',
        summary: 'What a listed property is worth, with an 80 % interval and its comparables',
        description: `The rent a month (rental) or price (sale) the listing's comparables point to, and how far its asking price lies from it (pricePosition). ${METHOD} From the ${deps.plan} plan up (MIN_PLAN_ESTIMATES).`,
        tags: ['property'],
        params: Type.Object({ id: LISTING_ID }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: estimateResponse, ...problemResponses(400, 401, 403, 404, 414, 429) },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const { id } = request.params;
      const answer = await deps.reads.estimateOfListing(id);
      if (!answer) throw notFound(`No listing with id ${id} in the mirror.`);
      return { data: answer.estimate, meta: answer.freshness };
    },
  );
}

/** The query of GET /v1/estimate: the property's kind, position or address, and layout. */
const estimateQuery = Type.Object(
  {
    kind: Type.Enum(['rental', 'sale'], { description: "rental: a month's rent; sale: the price." }),
    near: Type.Optional(
      Type.String({
        pattern: '^-?[0-9]{1,3}(\\.[0-9]{1,10})?,-?[0-9]{1,3}(\\.[0-9]{1,10})?$',
        description: "The property's position: lat,lon (WGS84 decimal degrees). Give near or address, not both.",
      }),
    ),
    address: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 200,
        description:
          "The property's street address, a house number first, then after commas its borough or ZIP code where the street is in several (`56 W 45th St, Manhattan`, `37-12 75th St, 11372`). Found among the city's tax lots in the mirror (PLUTO, NYC Open Data), whose position is then estimated (`place`). Give near or address, not both.",
      }),
    ),
    bedrooms: Type.Integer({ minimum: 0, maximum: MOST_ROOMS, description: 'Bedrooms; 0 is a studio.' }),
    bathrooms: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MOST_ROOMS,
        multipleOf: 0.5,
        description: 'Full bathrooms plus a half for a half bath (1.5).',
      }),
    ),
    sqft: Type.Optional(Type.Integer({ minimum: 100, maximum: 100_000, description: 'Size in square feet.' })),
    buildingType: Type.Optional(
      Type.String({
        pattern: '^[A-Z_]{2,30}$',
        description: "The site's building type: CONDO, CO_OP, HOUSE, MULTIFAMILY, TOWNHOUSE, ...",
      }),
    ),
  },
  { additionalProperties: false },
);

/** GET /v1/estimate. */
function registerGetEstimate(fastify: FastifyInstance, deps: RouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/estimate',
    {
      config: { minPlan: deps.plan, answerCache: true },
      schema: {
        operationId: 'getEstimate',
        summary: 'What a property that is not listed is worth',
        description: `The rent a month (kind=rental) or price (kind=sale) of a property described by its position (near) or street address (address) and its layout. ${METHOD} A point off the city's land is a 422 OFF_LAND; an address no tax lot in the mirror carries a 422 ADDRESS_NOT_FOUND, one in several places a 422 ADDRESS_AMBIGUOUS. From the ${deps.plan} plan up (MIN_PLAN_ESTIMATES).`,
        tags: ['property'],
        querystring: estimateQuery,
        response: { 200: estimateResponse, ...problemResponses(400, 401, 403, 422, 429) },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const q = request.query;
      if ((q.near === undefined) === (q.address === undefined)) {
        const message = q.near === undefined ? 'give near or address' : 'give near or address, not both';
        throw invalidParams([
          { name: 'near', in: 'query', message },
          { name: 'address', in: 'query', message },
        ]);
      }
      const { point, place } = await placeOfQuery(q, deps);
      const answer = await deps.reads.estimateOfProperty({
        kind: q.kind,
        point,
        bedrooms: q.bedrooms,
        bathrooms: q.bathrooms ?? null,
        sqft: q.sqft ?? null,
        buildingType: q.buildingType ?? null,
      });
      if (answer === 'off-land')
        throw new Problem('OFF_LAND', `The point ${point.latitude},${point.longitude} lies on none of the city's land.`);
      return { data: { ...answer.estimate, place }, meta: answer.freshness };
    },
  );
}

/**
 * The point an estimate is asked at: `near` as given, or the position of the tax lots that carry `address`.
 * @throws Problem INVALID_PARAMS (a point off the globe, an address with no house number), ADDRESS_NOT_FOUND, ADDRESS_AMBIGUOUS.
 */
async function placeOfQuery(
  q: { near?: string; address?: string },
  deps: RouteDeps,
): Promise<{ point: GeoPoint; place: AddressPlace | null }> {
  if (q.near !== undefined) {
    const [latitude, longitude] = q.near.split(',').map(Number);
    if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
      throw invalidParams([{ name: 'near', in: 'query', message: 'must be lat,lon within ±90 and ±180' }]);
    }
    return { point: { latitude, longitude }, place: null };
  }
  const address = parseAddress(q.address as string);
  if (!address) {
    throw invalidParams([{ name: 'address', in: 'query', message: 'must start with a house number and a street (56 W 45th St)' }]);
  }
  const found = await deps.cityRecords.placeOfAddress(address);
  if ('unknown' in found) throw new Problem('ADDRESS_NOT_FOUND', `No tax lot in the mirror carries the address "${q.address}".`);
  if ('ambiguous' in found) {
    throw new Problem(
      'ADDRESS_AMBIGUOUS',
      `Tax lots in more than one place carry the address "${q.address}" (${found.ambiguous.join('; ')}): add the borough or ZIP code after a comma.`,
    );
  }
  return { point: found.found.geoPoint, place: found.found };
}
