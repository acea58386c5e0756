import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { ListingKind } from '../../domain/listing.js';
import type { ReadService } from '../../read/read-service.js';
import type { ListingSearch, SearchAfter } from '../../search/listing-search.js';
import { RANGES } from '../../search/filters.js';
import { SEARCH_FILTER_NAMES, type SearchFilters } from '../../domain/search-filters.js';
import { districtFilters } from '../../domain/city-districts.js';
import { CSV_COLUMNS, FeatureCollectionSchema, searchFormat, toCsv, toFeatureCollection } from '../formats.js';
import { resolveAreas } from '../area-param.js';
import { pageLinks } from '../links.js';
import { ListingSummary } from '../../wire/listing.js';
import { project, sparseFields } from '../sparse-fields.js';
import { CursorError, decodeCursor } from '../../search/cursor.js';
import { linkHeader } from '../plugins/caching.js';
import { principalOf } from '../plugins/auth.js';
import { invalidParams } from '../problem.js';
import { problemResponses } from '../schemas/common.js';
import { RentalClustersQuery, RentalsQuery, SaleClustersQuery, SalesQuery } from '../schemas/search-query.js';
import { ClustersMeta } from '../schemas/common.js';
import { clusterGrid } from '../../search/clusters.js';
import { parseInstant } from '../validation.js';
import { geoFilters } from '../geo-params.js';
import { DEFAULT_SORT_DIRECTIONS } from '../../search/sorts.js';

type SalesQueryT = Static<typeof SalesQuery>;
type RentalsQueryT = Static<typeof RentalsQuery>;
type AnyQuery = Partial<SalesQueryT & RentalsQueryT>;

const DEFAULT_PER_PAGE = 50;
const csvList = (value: string | undefined) => (value ? value.split(',').filter(Boolean) : undefined);

/**
 * Turns a validated query into a search: resolves `areas` to the listed areas and their descendants
 * (400 for an unknown id), applies the plan's page-size cap, and returns the boroughs it covers.
 */
async function toSearch(kind: ListingKind, q: AnyQuery, request: FastifyRequest, reads: ReadService, config: Config) {
  const { areaIds, boroughs } = resolveAreas(q.areas, await reads.areaTree());
  const geo = geoFilters(q);
  const cap = config.plans[principalOf(request).plan].maxPerPage;
  // The query's own filters pass as they are (one definition: the domain's SearchFilters); the rest is resolved here.
  const filters: Record<string, unknown> = {};
  for (const name of SEARCH_FILTER_NAMES) if (q[name] !== undefined) filters[name] = q[name];
  const { cursor, sort, sortDir, page, perPage } = q;
  const base: ListingSearch = {
    ...(filters as SearchFilters),
    kind,
    areaIds,
    amenities: csvList(q.amenities),
    buildingTypes: csvList(q.buildingType),
    ...districtFilters(q),
    // The schema's date-time format accepted only instants parseInstant can normalise.
    listedAfter: q.listedAfter ? parseInstant(q.listedAfter)!.toISOString() : undefined,
    listedBefore: q.listedBefore ? parseInstant(q.listedBefore)!.toISOString() : undefined,
    bbox: geo.bbox,
    near: geo.near,
    sort: sort ?? 'RECOMMENDED',
    sortDir: sortDir ?? DEFAULT_SORT_DIRECTIONS[sort ?? 'RECOMMENDED'],
    page: page ?? 1,
    perPage: Math.min(perPage ?? DEFAULT_PER_PAGE, cap),
  };
  const inverted = RANGES.filter(([min, max]) => {
    const [low, high] = [base[min], base[max]] as (number | undefined)[];
    return low !== undefined && high !== undefined && low > high;
  });
  if (inverted.length) throw invalidParams(inverted.map(([min, max]) => ({ name: min, in: 'query', message: `must not exceed ${max}` })));
  // Final once built: a cursor's position is decoded against the search's own order first.
  const search: ListingSearch = cursor ? { ...base, after: afterCursor(base, cursor) } : base;
  return { search, boroughs, polygon: geo.polygon };
}

/**
 * The position `cursor` names in `search`'s order.
 * @throws Problem INVALID_PARAMS naming `cursor` when it is not one of this search's cursors.
 */
function afterCursor(search: ListingSearch, cursor: string): SearchAfter {
  try {
    return decodeCursor(search, cursor);
  } catch (error) {
    if (!(error instanceof CursorError)) throw error;
    throw invalidParams([{ name: 'cursor', in: 'query', message: error.message }]);
  }
}

const listResponse = Type.Object(
  { data: Type.Array(Type.Ref('ListingSummary')), meta: Type.Ref('ListMeta') },
  { description: 'One page of matching active listings, the total, pagination links and freshness.' },
);

/** What the search routes read with. */
interface SearchDeps {
  reads: ReadService;
  config: Config;
}

/** The route's options; generic in its query schema, so that each route's request.query is typed by its own. */
function searchOptions<Q extends typeof SalesQuery | typeof RentalsQuery>(querystring: Q, summary: string, operationId: string) {
  return {
    config: { access: 'anonymous' as const, answerCache: true },
    schema: {
      operationId,
      summary,
      description:
        'Active listings matching every filter given. Unknown parameters are rejected (400), so a misspelt filter never widens a search. ' +
        'meta.dataAge is the oldest last successful sync of the scopes (listing kind x borough) the search covers.',
      tags: ['search'],
      querystring,
      response: {
        200: {
          description: 'One page of matching active listings: as JSON (the envelope), GeoJSON or CSV (`format=` or `Accept`).',
          content: {
            'application/json': { schema: listResponse },
            'application/geo+json': { schema: FeatureCollectionSchema },
            'text/csv': {
              schema: Type.String({
                description: `CSV with a header row: ${CSV_COLUMNS.join(', ')}. Paging in the Link header; the total in X-Total-Count.`,
              }),
            },
          },
        },
        ...problemResponses(400, 401, 429),
      },
      security: [{}, { bearerAuth: [] }] as { [label: string]: string[] }[],
    },
  };
}

/** A search's answer: JSON, GeoJSON or CSV, sparse fields applied. */
async function answer(deps: SearchDeps, kind: ListingKind, path: string, query: AnyQuery, request: FastifyRequest, reply: FastifyReply) {
  const format = searchFormat(query.format, request.headers.accept);
  if (query.fields !== undefined && format === 'csv')
    throw invalidParams([{ name: 'fields', in: 'query', message: 'applies to JSON and GeoJSON answers; a CSV has its fixed columns' }]);
  const keep = sparseFields(query.fields, ListingSummary, reply);
  // A GeoJSON feature's geometry is the listing's position: kept whatever the fields.
  if (keep && format === 'geojson') keep.add('geoPoint');
  const { search, boroughs, polygon } = await toSearch(kind, query, request, deps.reads, deps.config);
  const found = await deps.reads.search(search, boroughs, polygon);
  const meta = {
    ...found.freshness,
    total: found.total,
    page: search.page,
    perPage: search.perPage,
    links: pageLinks(path, request.url, search.page, search.perPage, found.total, found.nextCursor),
  };
  const items = keep ? found.items.map((item) => project(item, keep)) : found.items;
  if (format === 'geojson') return reply.type('application/geo+json').send(toFeatureCollection(items, meta));
  if (format === 'csv') {
    const link = linkHeader(meta.links);
    if (link) reply.header('Link', link);
    return reply.type('text/csv; charset=utf-8').header('X-Total-Count', String(meta.total)).send(toCsv(found.items));
  }
  return { data: items, meta };
}

/** The matches of a search in view, counted by the cells of the map's grid at its zoom. */
async function clusters(deps: SearchDeps, kind: ListingKind, query: AnyQuery & { zoom: number; bbox: string }, request: FastifyRequest) {
  const { search, boroughs, polygon } = await toSearch(kind, query, request, deps.reads, deps.config);
  const grid = clusterGrid(query.zoom, search.bbox!);
  const found = await deps.reads.clusters(search, boroughs, grid, polygon);
  const total = found.cells.reduce((n, cell) => n + cell.count, 0);
  return {
    data: found.cells,
    meta: { ...found.freshness, total, zoom: grid.zoom, cellDegrees: { longitude: grid.longitude, latitude: grid.latitude } },
  };
}

/** The options of a clusters route. */
function clustersOptions(querystring: typeof SaleClustersQuery | typeof RentalClustersQuery, kind: string, operationId: string) {
  return {
    config: { access: 'anonymous' as const, answerCache: true },
    schema: {
      operationId,
      summary: `Count the ${kind} listings of a search on a map's grid`,
      description:
        `Every active ${kind} listing matching the search's filters inside \`bbox\`, counted by the cells of the map's grid at \`zoom\` (32-pixel cells): ` +
        "per cell the count, the centroid of the listings' positions and their price range. The counts sum to the search's total with the same filters " +
        'and box (`meta.total`), so a map can show every match however many there are; a cell without matches is not listed. Freshness as the search.',
      tags: ['search'],
      querystring,
      response: {
        200: {
          description: 'The grid cells holding matches.',
          content: { 'application/json': { schema: Type.Object({ data: Type.Array(Type.Ref('ListingCluster')), meta: ClustersMeta }) } },
        },
        ...problemResponses(400, 401, 429),
      },
      security: [{}, { bearerAuth: [] }] as { [label: string]: string[] }[],
    },
  };
}

/** GET /v1/search/sales and GET /v1/search/rentals (spec 4.1, 4.2). Anonymous callers search as Free. */
export function registerSearchRoutes(fastify: FastifyInstance, deps: SearchDeps): void {
  // Typed by the route schemas (TypeBox): request.query needs no cast.
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/v1/search/sales/clusters', clustersOptions(SaleClustersQuery, 'sale', 'clusterSales'), (request) =>
    clusters(deps, 'sale', request.query as never, request),
  );
  app.get('/v1/search/rentals/clusters', clustersOptions(RentalClustersQuery, 'rental', 'clusterRentals'), (request) =>
    clusters(deps, 'rental', request.query as never, request),
  );
  app.get('/v1/search/sales', searchOptions(SalesQuery, 'Search sale listings', 'searchSales'), (request, reply) =>
    answer(deps, 'sale', '/v1/search/sales', request.query, request, reply),
  );
  app.get('/v1/search/rentals', searchOptions(RentalsQuery, 'Search rental listings', 'searchRentals'), (request, reply) =>
    answer(deps, 'rental', '/v1/search/rentals', request.query, request, reply),
  );
}
