/**
 * Shapes of the upstream site's GraphQL API as far as they are known (../shared/data/upstream-api.md),
 * in the site's own area numbering. Every member may be missing or null in an answer: the mappers read
 * a missing member as unknown, never as an error (only a node's `id` is required).
 */

/** One area of the site's `areas` answer (confirmed: `streeteasy-areas/areas.json`). */
export interface SiteArea {
  /** The area's URL slug, e.g. `downtown-all`. */
  id: string;
  name: string;
  /** The id search filters take. */
  numericId: number;
  parentId: number | null;
  geometry?: { encodedBoundary?: string | null } | null;
}

export interface UpstreamGeoPoint {
  latitude?: number | null;
  longitude?: number | null;
}

/** A search node: the confirmed fields, and those several public clients ask for. */
export interface UpstreamSearchNode {
  id: string | number;
  areaName?: string | null;
  bedroomCount?: number | null;
  fullBathroomCount?: number | null;
  halfBathroomCount?: number | null;
  buildingType?: string | null;
  geoPoint?: UpstreamGeoPoint | null;
  leadMedia?: { photo?: { key?: string | null } | null } | null;
  price?: number | null;
  sourceGroupLabel?: string | null;
  status?: string | null;
  street?: string | null;
  unit?: string | null;
  urlPath?: string | null;
  tier?: string | null;
  // seen in several clients' queries
  availableAt?: string | null;
  furnished?: boolean | null;
  hasTour3d?: boolean | null;
  hasVideos?: boolean | null;
  leaseTermMonths?: number | null;
  /** Square feet; 0 means unknown. */
  livingAreaSize?: number | null;
  monthsFree?: number | null;
  noFee?: boolean | null;
  netEffectivePrice?: number | null;
  upcomingOpenHouse?: { startTime?: string | null; endTime?: string | null } | null;
}

export interface UpstreamEdge {
  node?: UpstreamSearchNode | null;
}

/** Answer of `searchRentals` / `searchSales`: only `totalCount` and `edges` are confirmed. */
export interface UpstreamSearchAnswer {
  totalCount?: number | null;
  edges?: (UpstreamEdge | null)[] | null;
}

/** A bound of a range filter, inclusive. */
export interface Bound {
  lowerBound?: number;
  upperBound?: number;
}

/** Filters the crawler sends (confirmed: areas, price, bedrooms; the status filter is added by the client). */
export interface UpstreamSearchFilters {
  areas?: number[];
  price?: Bound;
  bedrooms?: Bound;
}

/** `RECOMMENDED DESCENDING` is the only sorting confirmed by a real answer. */
export type UpstreamSortAttribute = 'RECOMMENDED' | 'LISTED_AT' | 'PRICE' | 'SQFT';

/** `SearchRentalsInput` / `SearchSalesInput`, written by the client as a literal in the query text. */
export interface UpstreamSearchInput {
  filters: UpstreamSearchFilters;
  page: number;
  perPage: number;
  sorting: { attribute: UpstreamSortAttribute; direction: 'ASCENDING' | 'DESCENDING' };
}

/** `propertyDetails` of a rental or sale detail (clients). */
export interface UpstreamPropertyDetails {
  address?: { street?: string | null; city?: string | null; state?: string | null; zipCode?: string | null; unit?: string | null } | null;
  roomCount?: number | null;
  bedroomCount?: number | null;
  fullBathroomCount?: number | null;
  halfBathroomCount?: number | null;
  livingAreaSize?: number | null;
  amenities?: {
    list?: string[] | null;
    doormanTypes?: string[] | null;
    parkingTypes?: string[] | null;
    storageSpaceTypes?: string[] | null;
  } | null;
}

/** `rentalByListingId` / `saleByListingId` (clients; identical in three independent ones). Null when the site has none. */
export interface UpstreamListingDetail {
  id: string | number;
  status?: string | null;
  /** When the listing was created on the site: the mirror's listing date. */
  createdAt?: string | null;
  availableAt?: string | null;
  offMarketAt?: string | null;
  buildingId?: string | number | null;
  description?: string | null;
  media?: {
    photos?: ({ key?: string | null } | null)[] | null;
    floorPlans?: ({ key?: string | null } | null)[] | null;
    tour3dUrl?: string | null;
  } | null;
  propertyDetails?: UpstreamPropertyDetails | null;
  /** Rentals: `price noFee monthsFree leaseTermMonths`; sales: `price maintenanceFee taxes`. */
  pricing?: {
    price?: number | null;
    noFee?: boolean | null;
    monthsFree?: number | null;
    leaseTermMonths?: number | null;
    maintenanceFee?: number | null;
    taxes?: number | null;
  } | null;
  upcomingOpenHouses?: ({ startTime?: string | null; endTime?: string | null } | null)[] | null;
}

/** `buildingByRentalListingId` / `buildingBySaleListingId` (clients). */
export interface UpstreamBuildingDetail {
  id: string | number;
  name?: string | null;
  type?: string | null;
  residentialUnitCount?: number | null;
  yearBuilt?: number | null;
  status?: string | null;
  address?: { street?: string | null; city?: string | null; state?: string | null; zipCode?: string | null } | null;
  media?: { photos?: ({ key?: string | null } | null)[] | null } | null;
  area?: { name?: string | null } | null;
  policies?: { list?: string[] | null; petPolicy?: { catsAllowed?: boolean | null; dogsAllowed?: boolean | null } | null } | null;
}
