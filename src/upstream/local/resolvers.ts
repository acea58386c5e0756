import type { SiteListing } from './site-data.js';
import type { LocalMarket, LocalSearchFilters, LocalSorting } from './market.js';

/** How the local upstream behaves where the real site is known to limit or vary (switchable in tests). */
export interface Behaviour {
  /** A search answers at most this many results, however many pages are asked (0: no cap). */
  resultCap: number;
  /** Page 1 repeats organic nodes as featured and sponsored edges, as the site's answers do. */
  promotedEdges: boolean;
}

export const SITE_BEHAVIOUR: Behaviour = { resultCap: 1000, promotedEdges: true };

interface SearchArgs {
  input: { filters?: LocalSearchFilters | null; page?: number | null; perPage?: number | null; sorting?: LocalSorting | null };
}

/** The city a postal address gives for each borough (upstream ids): Manhattan is "New York". */
const CITY: Record<number, string> = { 100: 'New York', 200: 'Bronx', 300: 'Brooklyn', 400: 'Queens', 500: 'Staten Island' };

/** The site's search criteria echo, e.g. `area:301|beds:2-3|price:-4000|status:open`. */
function criteria(filters: LocalSearchFilters): string {
  const range = (b?: { lowerBound?: number | null; upperBound?: number | null } | null) => `${b?.lowerBound ?? ''}-${b?.upperBound ?? ''}`;
  const parts = [];
  if (filters.areas?.length) parts.push(`area:${filters.areas.join(',')}`);
  if (filters.bedrooms) parts.push(`beds:${range(filters.bedrooms)}`);
  if (filters.price) parts.push(`price:${range(filters.price)}`);
  parts.push('status:open');
  return parts.join('|');
}

/** A search node: what the site is known to answer for one listing in a search. */
function searchNode(l: SiteListing) {
  const n = l.node;
  return {
    id: n.id,
    areaName: n.areaName,
    bedroomCount: n.bedroomCount,
    fullBathroomCount: n.fullBathroomCount,
    halfBathroomCount: n.halfBathroomCount,
    buildingType: n.buildingType,
    geoPoint: n.geoPoint,
    leadMedia: n.leadPhotoKey ? { photo: { key: n.leadPhotoKey } } : null,
    price: n.price,
    sourceGroupLabel: n.sourceGroupLabel,
    status: n.status,
    street: n.street,
    unit: n.unit,
    urlPath: n.urlPath,
    tier: n.tier,
    relloExpress: null,
    availableAt: n.availableAt,
    furnished: n.furnished,
    hasTour3d: n.hasTour3d,
    hasVideos: n.hasVideos,
    isNewDevelopment: null,
    leaseTermMonths: null,
    livingAreaSize: n.livingAreaSize,
    monthsFree: n.monthsFree,
    noFee: n.noFee,
    netEffectivePrice: n.netEffectivePrice,
    offMarketAt: null,
    photos: n.leadPhotoKey ? [{ key: n.leadPhotoKey }] : [],
    priceChangedAt: null,
    priceDelta: null,
    slug: null,
    sourceType: null,
    upcomingOpenHouse: null,
  };
}

/** A search query's resolver: a page of `kind` listings the local market finds, with the site's promoted edges and result cap. */
function searchResolver(market: LocalMarket, behaviour: Behaviour, kind: 'sale' | 'rental', prefix: 'Rental' | 'Sale') {
  return (args: SearchArgs) => {
    const page = args.input.page ?? 1;
    const perPage = args.input.perPage ?? 50;
    if (page < 1 || perPage < 1 || perPage > 500) throw new Error('page must be >= 1 and perPage between 1 and 500');
    const filters = args.input.filters ?? {};
    const matches = market.search(kind, filters, args.input.sorting);
    const reachable = behaviour.resultCap > 0 ? matches.slice(0, behaviour.resultCap) : matches;
    const organic = reachable
      .slice((page - 1) * perPage, page * perPage)
      .map((l) => ({ __typename: `Organic${prefix}Edge`, node: searchNode(l) }));
    const edges = [...organic];
    if (behaviour.promotedEdges && page === 1 && organic.length > 0) {
      edges.unshift({ __typename: `Featured${prefix}Edge`, node: organic[0].node });
      if (organic.length > 1) edges.splice(3, 0, { __typename: `Sponsored${prefix}Edge`, node: organic[1].node });
    }
    return { totalCount: matches.length, edges, search: { criteria: criteria(filters) } };
  };
}

/** A detail query's resolver: a `kind` listing of the local market as the site details it; null when it has none. */
function detailResolver(market: LocalMarket, kind: 'sale' | 'rental') {
  return ({ id }: { id: string }) => {
    const l = market.listing(kind, String(id));
    if (!l) return null;
    const n = l.node;
    const borough = market.boroughOf(l.areaId);
    const common = {
      id: n.id,
      status: n.status,
      createdAt: n.listedAt,
      updatedAt: null,
      availableAt: n.availableAt,
      offMarketAt: null,
      buildingId: l.buildingId,
      description: null,
      statusChanges: [],
      media: { photos: n.leadPhotoKey ? [{ key: n.leadPhotoKey }] : [], floorPlans: [], tour3dUrl: null, videos: [] },
      propertyDetails: {
        address: {
          street: n.street,
          houseNumber: null,
          streetName: null,
          city: borough === null ? null : (CITY[borough] ?? null),
          state: n.state,
          zipCode: n.zipCode,
          unit: n.unit,
        },
        roomCount: null,
        bedroomCount: n.bedroomCount,
        fullBathroomCount: n.fullBathroomCount,
        halfBathroomCount: n.halfBathroomCount,
        livingAreaSize: n.livingAreaSize,
        amenities: {
          list: n.amenities,
          doormanTypes: n.amenities.includes('DOORMAN') ? ['DOORMAN'] : [],
          parkingTypes: [],
          storageSpaceTypes: [],
        },
        features: { list: [] },
      },
      upcomingOpenHouses: [],
    };
    if (kind === 'sale')
      return { ...common, pricing: { price: n.price, maintenanceFee: n.monthlyMaintenance ?? null, taxes: n.monthlyTaxes ?? null } };
    return {
      ...common,
      pricing: { price: n.price, noFee: n.noFee, monthsFree: n.monthsFree, leaseTermMonths: null, priceDelta: null, priceChanges: [] },
      propertyHistory: [
        {
          listingId: n.id,
          sourceGroupLabel: n.sourceGroupLabel,
          offMarketAt: null,
          rentalEventsOfInterest: market.historyOf(l).map((e) => ({ date: e.date, price: e.price })),
        },
      ],
    };
  };
}

/** A building query's resolver: the building of a `kind` listing of the local market; null when it has none. */
function buildingResolver(market: LocalMarket, kind: 'sale' | 'rental') {
  return ({ id }: { id: string }) => {
    const l = market.listing(kind, String(id));
    const b = l?.buildingId ? market.building(l.buildingId) : undefined;
    if (!b) return null;
    return {
      id: b.id,
      name: b.name,
      type: b.type,
      residentialUnitCount: b.unitCount,
      yearBuilt: b.yearBuilt,
      status: b.status,
      address: b.address,
      media: { photos: [] },
      area: { name: market.areas.find((a) => a.numericId === b.areaId)?.name ?? null },
      policies: b.policies,
      nearby: { transitStations: [] },
    };
  };
}

/**
 * Root resolvers of the local upstream, answering the site's known shapes from the market: searches
 * (`totalCount`, edges of three types with promoted repeats on page 1, results past the cap unreachable),
 * listing and building details, and the captured area list.
 */
export function rootResolvers(market: LocalMarket, behaviour: Behaviour) {
  return {
    searchRentals: searchResolver(market, behaviour, 'rental', 'Rental'),
    searchSales: searchResolver(market, behaviour, 'sale', 'Sale'),
    rentalByListingId: detailResolver(market, 'rental'),
    saleByListingId: detailResolver(market, 'sale'),
    buildingByRentalListingId: buildingResolver(market, 'rental'),
    buildingBySaleListingId: buildingResolver(market, 'sale'),
    areas: () => market.areas,
  };
}
