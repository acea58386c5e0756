import type { UpstreamListingNode, UpstreamSearchInput } from '../types.js';
import type { LocalMarket, LocalSearchFilters } from './market.js';

interface SearchArgs {
  input: { filters?: LocalSearchFilters | null; page?: number | null; perPage?: number | null; sorting?: UpstreamSearchInput['sorting'] | null };
}

/** Raised for a search input the real site would refuse (perPage above 500, page below 1). */
class BadInputError extends Error {}

/**
 * Root resolvers of the local upstream. Searches answer the site's shape: `totalCount`, `pageInfo`,
 * and edges with `__typename`; the first page repeats its first node as a featured edge, as the site's
 * answers do, so clients must de-duplicate.
 */
export function rootResolvers(market: LocalMarket) {
  const search = (kind: 'sale' | 'rental', prefix: 'Rental' | 'Sale') => (args: SearchArgs) => {
    const page = args.input.page ?? 1;
    const perPage = args.input.perPage ?? 50;
    if (page < 1 || perPage < 1 || perPage > 500) throw new BadInputError('page must be >= 1 and perPage between 1 and 500');
    const matches = market.search(kind, args.input.filters ?? {}, args.input.sorting ?? undefined);
    const slice = matches.slice((page - 1) * perPage, page * perPage);
    const totalPages = Math.ceil(matches.length / perPage);
    const edges: { __typename: string; node: UpstreamListingNode }[] = slice.map((l) => ({
      __typename: `Organic${prefix}Edge`,
      node: market.present(l),
    }));
    if (page === 1 && edges.length > 0) edges.unshift({ __typename: `Featured${prefix}Edge`, node: edges[0].node });
    return { totalCount: matches.length, pageInfo: { currentPage: page, hasNextPage: page < totalPages, totalPages }, edges };
  };
  const detail = (kind: 'sale' | 'rental') => ({ id }: { id: string }) => {
    const l = market.listing(kind, String(id));
    return l ? market.present(l) : null;
  };
  const buildingOf = (kind: 'sale' | 'rental') => ({ id }: { id: string }) => {
    const l = market.listing(kind, String(id));
    const b = l?.buildingId ? market.building(l.buildingId) : undefined;
    return b ? market.presentBuilding(b) : null;
  };
  return {
    searchRentals: search('rental', 'Rental'),
    searchSales: search('sale', 'Sale'),
    rentalByListingId: detail('rental'),
    saleByListingId: detail('sale'),
    buildingByRentalListingId: buildingOf('rental'),
    buildingBySaleListingId: buildingOf('sale'),
    building: ({ idOrSlug }: { idOrSlug: string }) => {
      const b = market.building(idOrSlug);
      return b ? market.presentBuilding(b) : null;
    },
    areas: () => market.areas,
  };
}
