import { districtFilters, districtParameters } from '../../domain/city-districts.js';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { stringify } from 'csv-stringify';
import { type Static, Type } from 'typebox';
import type { Config } from '../../config.js';
import type { AreaTree } from '../../domain/area.js';
import type { CityRecords } from '../../read/city-records.js';
import type { RecordedSaleSearch } from '../../store/recorded-sale-filters.js';
import { RecordedSaleSchema, type RecordedSale } from '../../wire/recorded-sale.js';
import { FeatureCollectionSchema, searchFormat, toFeatureCollection } from '../formats.js';
import { geoFilters } from '../geo-params.js';
import { recordedSaleAreaFilter } from '../area-param.js';
import { registerRecordedSalesHistoryRoute } from './recorded-sales-history.js';
import { registerSoldComparablesRoute } from './sold-comparables.js';
import { pageLinks } from '../links.js';
import { linkHeader } from '../plugins/caching.js';
import { principalOf } from '../plugins/auth.js';
import { invalidParams } from '../problem.js';
import { problemResponses } from '../schemas/common.js';
import { commonFilters, queryObject } from '../schemas/search-query.js';
import type { ListingRow } from '../../store/listing-rows.js';

const DEFAULT_PER_PAGE = 50;

/** The CSV columns of a recorded sale: its fields, address and position flattened into their own columns. */
export const RECORDED_SALE_CSV_COLUMNS = [
  ...Object.keys(RecordedSaleSchema.properties).flatMap((k) =>
    k === 'address' ? ['street', 'unit', 'zipCode'] : k === 'geoPoint' ? ['latitude', 'longitude'] : [k],
  ),
] as const;

export const RecordedSalesQuery = queryObject({
  areas: Type.String({
    ...commonFilters.areas,
    description:
      'Comma-separated area ids from /v1/areas (at most 50). A borough matches every sale in it; a smaller area matches the sales positioned in it.',
  }),
  bbox: Type.String({
    ...commonFilters.bbox,
    description: 'Map bounds `minLon,minLat,maxLon,maxLat` (WGS84 degrees): only positioned sales inside.',
  }),
  near: Type.String({
    ...commonFilters.near,
    description: 'A point `lat,lon` (WGS84 degrees): only positioned sales within `radius` of it.',
  }),
  // The radius of recorded sales is measured on a local flat projection (recorded-sale-filters.ts), not rounded as a listing's.
  radius: Type.Integer({ minimum: 1, maximum: 50_000, description: 'Metres around `near`, 1 to 50,000; default 1,000. Needs `near`.' }),
  from: Type.String({ format: 'date', description: 'First sale date (inclusive), YYYY-MM-DD.' }),
  to: Type.String({ format: 'date', description: 'Last sale date (inclusive), YYYY-MM-DD.' }),
  minPrice: Type.Integer({ minimum: 0, description: 'Least sale price, dollars.' }),
  maxPrice: Type.Integer({ minimum: 0, description: 'Greatest sale price, dollars.' }),
  buildingClassCategory: Type.String({
    pattern: '^[0-9]{2}(,[0-9]{2}){0,49}$',
    description:
      'Comma-separated DOF building class category codes (`01` one family dwellings, `13` condos in elevator buildings, ...): any may match.',
  }),
  bbl: Type.String({ pattern: '^[1-5][0-9]{9}$', description: 'Borough-block-lot, 10 digits.' }),
  buildingId: Type.String({
    pattern: '^[a-z0-9A-Z_-]{1,120}$',
    description: 'A building of /v1/building: the sales at its address and ZIP code.',
  }),
  noConsideration: Type.Boolean({
    description: '`false`: leave out transfers without consideration; `true`: only them; absent: both (each flagged).',
  }),
  ...districtParameters(
    'A sale is in the district whose polygon (NYC Open Data) holds its position; a sale without a position is in none.',
  ),
  sort: Type.Enum(['saleDate', 'salePrice', 'pricePerSqft'], {
    description: 'Order; default saleDate. Unknown values last; ties broken by id in the same direction.',
  }),
  sortDir: Type.Enum(['ASC', 'DESC'], { description: 'Sort direction; default DESC (newest, dearest first).' }),
  page: commonFilters.page,
  perPage: commonFilters.perPage,
  format: commonFilters.format,
});

/** A page of recorded sales as CSV (RFC 4180, header row first); unknown values are empty. */
function toCsv(items: RecordedSale[]): Readable {
  const stream = stringify({ header: true, columns: [...RECORDED_SALE_CSV_COLUMNS] });
  for (const s of items)
    stream.write({
      ...s,
      street: s.address.street,
      unit: s.address.unit,
      zipCode: s.address.zipCode,
      latitude: s.geoPoint?.latitude ?? null,
      longitude: s.geoPoint?.longitude ?? null,
    });
  stream.end();
  return stream;
}

/**
 * GET /v1/recorded-sales (every keyed plan) and GET /v1/market/recorded-sales (monthly figures, from
 * `featurePlans.marketHistory` up): NYC Department of Finance recorded sales mirrored from NYC Open Data.
 */
export function registerRecordedSalesRoutes(
  fastify: FastifyInstance,
  deps: {
    cityRecords: CityRecords;
    areaTree: () => Promise<AreaTree>;
    findListing: (id: string) => Promise<ListingRow | undefined>;
    config: Config;
    clock: () => Date;
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/recorded-sales',
    {
      schema: {
        operationId: 'searchRecordedSales',
        summary: 'Search recorded sales',
        description:
          'Sales the NYC Department of Finance recorded (rolling sales, via NYC Open Data), in every borough from 2016: what homes actually sold for. ' +
          'A sale under $10,000 (or with no price) is a transfer without consideration: listed, flagged `noConsideration`, and left out of every figure. ' +
          'Positions come from the tax lot (PLUTO, Manhattan) or a mirrored building at the same address; a sale without one is found by borough, not by area or map. ' +
          'meta.dataAge is the last successful sync of the recorded sales.',
        tags: ['recorded sales'],
        querystring: RecordedSalesQuery,
        response: {
          200: {
            description: 'One page of matching recorded sales: as JSON (the envelope), GeoJSON or CSV (`format=` or `Accept`).',
            content: {
              'application/json': { schema: Type.Object({ data: Type.Array(Type.Ref('RecordedSale')), meta: Type.Ref('ListMeta') }) },
              'application/geo+json': { schema: FeatureCollectionSchema },
              'text/csv': {
                schema: Type.String({
                  description: `CSV with a header row: ${RECORDED_SALE_CSV_COLUMNS.join(', ')}. Paging in the Link header; the total in X-Total-Count.`,
                }),
              },
            },
          },
          ...problemResponses(400, 401, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request, reply) => {
      const q = request.query;
      const format = searchFormat(q.format, request.headers.accept);
      const maxPerPage = deps.config.plans[principalOf(request).plan].maxPerPage;
      const search = recordedSaleSearchOf(q, await deps.areaTree(), maxPerPage);
      const found = await deps.cityRecords.recordedSales(search);
      const meta = {
        ...found.freshness,
        total: found.total,
        page: search.page,
        perPage: search.perPage,
        links: pageLinks('/v1/recorded-sales', request.url, search.page, search.perPage, found.total),
      };
      if (format === 'geojson') return reply.type('application/geo+json').send(toFeatureCollection(found.items, meta));
      if (format === 'csv') {
        const link = linkHeader(meta.links);
        if (link) reply.header('Link', link);
        // A stream: the typed reply knows only the schema's string.
        return (reply as FastifyReply).type('text/csv; charset=utf-8').header('X-Total-Count', String(meta.total)).send(toCsv(found.items));
      }
      return { data: found.items, meta };
    },
  );
  registerRecordedSalesHistoryRoute(fastify, deps);
  registerSoldComparablesRoute(fastify, deps);
}

/**
 * The store's search for a query of GET /v1/recorded-sales, its page capped at `maxPerPage` (the plan's).
 * @throws Problem INVALID_PARAMS when minPrice exceeds maxPrice or from comes after to.
 */
function recordedSaleSearchOf(q: Static<typeof RecordedSalesQuery>, tree: AreaTree, maxPerPage: number): RecordedSaleSearch {
  const geo = geoFilters(q);
  const errors = [];
  if (q.minPrice !== undefined && q.maxPrice !== undefined && q.minPrice > q.maxPrice)
    errors.push({ name: 'minPrice', in: 'query', message: 'must not exceed maxPrice' });
  if (q.from && q.to && q.from > q.to) errors.push({ name: 'from', in: 'query', message: 'must be on or before `to`' });
  if (errors.length) throw invalidParams(errors);
  return {
    ...recordedSaleAreaFilter(q.areas, tree),
    bbox: geo.bbox,
    near: geo.near,
    from: q.from,
    to: q.to,
    minPrice: q.minPrice,
    maxPrice: q.maxPrice,
    categories: q.buildingClassCategory?.split(','),
    bbl: q.bbl,
    buildingId: q.buildingId,
    noConsideration: q.noConsideration,
    ...districtFilters(q),
    sort: q.sort ?? 'saleDate',
    descending: (q.sortDir ?? 'DESC') === 'DESC',
    page: q.page ?? 1,
    perPage: Math.min(q.perPage ?? DEFAULT_PER_PAGE, maxPerPage),
  };
}
