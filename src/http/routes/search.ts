import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { ListingKind } from '../../domain/listing.js';
import type { Mirror } from '../../freshness/mirror.js';
import type { ListingSearch, SortDirection, SortField } from '../../store/search-query.js';
import { pageLinks } from '../links.js';
import { invalidParams } from '../problem.js';
import { problemResponses } from '../schemas/common.js';
import { RentalsQuery, SalesQuery } from '../schemas/search-query.js';

type SalesQueryT = Static<typeof SalesQuery>;
type RentalsQueryT = Static<typeof RentalsQuery>;
type AnyQuery = Partial<SalesQueryT & RentalsQueryT>;

const DEFAULT_PER_PAGE = 50;
const csvList = (value: string | undefined) => (value ? value.split(',').filter(Boolean) : undefined);

/**
 * Turns a validated query into a search: resolves `areas` to the listed areas and their descendants
 * (400 for an unknown id), applies the plan's page-size cap, and returns the boroughs it covers.
 */
async function toSearch(kind: ListingKind, q: AnyQuery, request: FastifyRequest, mirror: Mirror, config: Config) {
  const tree = await mirror.areaTree();
  let areaIds: number[] | undefined;
  const boroughs = new Set<number>();
  if (q.areas) {
    const ids = q.areas.split(',').map(Number);
    const unknown = ids.filter((id) => !tree.get(id));
    if (unknown.length) throw invalidParams([{ name: 'areas', in: 'query', message: `unknown area id ${unknown.join(', ')} (see /v1/areas)` }]);
    areaIds = [...new Set(ids.flatMap((id) => tree.withDescendants(id)))];
    for (const id of ids) boroughs.add(tree.boroughOf(id)!);
  }
  const cap = config.plans[request.principal.plan].maxPerPage;
  const search: ListingSearch = {
    kind,
    areaIds,
    minPrice: q.minPrice,
    maxPrice: q.maxPrice,
    minBeds: q.minBeds,
    maxBeds: q.maxBeds,
    minBaths: q.minBaths,
    maxBaths: q.maxBaths,
    minSqft: q.minSqft,
    maxSqft: q.maxSqft,
    amenities: csvList(q.amenities),
    petsAllowed: q.petsAllowed,
    buildingTypes: csvList(q.buildingType),
    prewar: q.prewar,
    saleType: q.saleType,
    minDaysOnMarket: q.minDaysOnMarket,
    maxDaysOnMarket: q.maxDaysOnMarket,
    listedAfter: q.listedAfter ? new Date(q.listedAfter).toISOString() : undefined,
    listedBefore: q.listedBefore ? new Date(q.listedBefore).toISOString() : undefined,
    hasOpenHouse: q.hasOpenHouse,
    has3dTour: q.has3dTour,
    maxMonthlyCost: q.maxMonthlyCost,
    minTransitScore: q.minTransitScore,
    noFee: q.noFee,
    furnished: q.furnished,
    availableBefore: q.availableBefore,
    sort: (q.sort ?? 'RECOMMENDED') as SortField,
    sortDir: (q.sortDir ?? 'DESC') as SortDirection,
    page: q.page ?? 1,
    perPage: Math.min(q.perPage ?? DEFAULT_PER_PAGE, cap),
  };
  const ranges: [string, number | undefined, number | undefined][] = [
    ['Price', q.minPrice, q.maxPrice],
    ['Beds', q.minBeds, q.maxBeds],
    ['Baths', q.minBaths, q.maxBaths],
    ['Sqft', q.minSqft, q.maxSqft],
    ['DaysOnMarket', q.minDaysOnMarket, q.maxDaysOnMarket],
  ];
  const inverted = ranges.filter(([, min, max]) => min !== undefined && max !== undefined && min > max);
  if (inverted.length) {
    throw invalidParams(inverted.map(([name]) => ({ name: `min${name}`, in: 'query', message: `must not exceed max${name}` })));
  }
  return { search, boroughs: [...boroughs] };
}

const listResponse = Type.Object({ data: Type.Array(Type.Ref('ListingSummary')), meta: Type.Ref('ListMeta') });

/** GET /v1/search/sales and GET /v1/search/rentals (spec 4.1, 4.2). Anonymous callers search as Free. */
export function registerSearchRoutes(app: FastifyInstance, deps: { mirror: Mirror; config: Config }): void {
  for (const [kind, path, querystring, summary] of [
    ['sale', '/v1/search/sales', SalesQuery, 'Search sale listings'],
    ['rental', '/v1/search/rentals', RentalsQuery, 'Search rental listings'],
  ] as const) {
    app.get(
      path,
      {
        config: { anonymous: true },
        schema: {
          summary,
          description:
            'Active listings matching every filter given. Unknown parameters are rejected (400), so a misspelt filter never widens a search. ' +
            'meta.dataAge is the oldest last successful sync of the scopes (listing kind x borough) the search covers.',
          tags: ['search'],
          querystring,
          response: { 200: listResponse, ...problemResponses(400, 401, 429) },
          security: [{}, { bearerAuth: [] }],
        },
      },
      async (request) => {
        const { search, boroughs } = await toSearch(kind, request.query as AnyQuery, request, deps.mirror, deps.config);
        const answer = await deps.mirror.search(search, boroughs);
        return {
          data: answer.items,
          meta: {
            ...answer.freshness,
            total: answer.total,
            page: search.page,
            perPage: search.perPage,
            links: pageLinks(path, request.url, search.page, search.perPage, answer.total),
          },
        };
      },
    );
  }
}
