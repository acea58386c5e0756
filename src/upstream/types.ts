import type { Inventory } from '../domain/building.js';

/**
 * Shapes of the upstream site's GraphQL API as public clients see them (../shared/data/README.md),
 * in the upstream's own area numbering. Fields marked "extension" are answered by the local upstream
 * only and asked for only when `UPSTREAM_EXTENDED_FIELDS` is on; every mapper treats them as optional.
 */
export interface UpstreamArea {
  id: number;
  name: string;
  parentId: number | null;
}

export interface UpstreamGeoPoint {
  latitude: number | null;
  longitude: number | null;
}

/** A search node (and, with the detail fields, a `rentalByListingId`/`saleByListingId` answer). */
export interface UpstreamListingNode {
  id: string;
  areaName?: string | null;
  bedroomCount?: number | null;
  fullBathroomCount?: number | null;
  halfBathroomCount?: number | null;
  buildingType?: string | null;
  geoPoint?: UpstreamGeoPoint | null;
  leadMedia?: { photo?: { key?: string | null } | null } | null;
  price: number;
  netEffectivePrice?: number | null;
  monthsFree?: number | null;
  noFee?: boolean | null;
  furnished?: boolean | null;
  availableAt?: string | null;
  /** Square feet; 0 means unknown. */
  livingAreaSize?: number | null;
  sourceGroupLabel?: string | null;
  status?: string | null;
  street?: string | null;
  unit?: string | null;
  zipCode?: string | null;
  state?: string | null;
  urlPath?: string | null;
  tier?: string | null;
  hasTour3d?: boolean | null;
  hasVideos?: boolean | null;
  upcomingOpenHouse?: { startTime?: string | null; endTime?: string | null } | null;
  // sale nodes
  saleType?: string | null;
  daysOnMarket?: number | null;
  monthlyTaxes?: number | null;
  monthlyMaintenance?: number | null;
  monthlyCommonCharges?: number | null;
  // extension fields
  areaId?: number | null;
  listedAt?: string | null;
  amenities?: string[] | null;
  petsAllowed?: boolean | null;
  yearBuilt?: number | null;
  buildingId?: string | null;
  // detail fields
  rooms?: number | null;
  leaseTermMonths?: number | null;
  fees?: UpstreamFee[] | null;
  contacts?: { name?: string | null; phone?: string | null; sourceGroup?: string | null }[] | null;
  photos?: { key?: string | null }[] | null;
  floorPlan?: { key?: string | null } | null;
  priceHistory?: { date: string; price: number; event: string }[] | null;
}

export interface UpstreamFee {
  typeLabel?: string | null;
  requirement?: string | null;
  refundability?: string | null;
  calcType?: string | null;
  amount?: number | null;
  timing?: string | null;
  occurrence?: string | null;
}

export interface UpstreamEdge {
  __typename: string;
  node: UpstreamListingNode;
}

/** Answer of `searchRentals` / `searchSales`. */
export interface UpstreamSearchResult {
  totalCount: number;
  pageInfo: { currentPage: number; hasNextPage: boolean; totalPages: number };
  edges: UpstreamEdge[];
}

export type UpstreamSortAttribute = 'RECOMMENDED' | 'LISTED_AT' | 'PRICE';

/** `SearchRentalsInput` / `SearchSalesInput` (the status field is added by the client). */
export interface UpstreamSearchInput {
  filters: {
    areas?: number[];
    price?: { lowerBound?: number; upperBound?: number };
    bedrooms?: { lowerBound?: number; upperBound?: number };
    bathrooms?: { lowerBound?: number; upperBound?: number };
    amenities?: string[];
    petsAllowed?: boolean;
  };
  page: number;
  perPage: number;
  sorting: { attribute: UpstreamSortAttribute; direction: 'ASCENDING' | 'DESCENDING' };
}

/** A building answer, in the shape of spec 2.6 with the area in upstream numbering. */
export interface UpstreamBuilding {
  id: string;
  name?: string | null;
  slug: string;
  type?: string | null;
  status?: string | null;
  yearBuilt?: number | null;
  floorCount?: number | null;
  unitCount?: number | null;
  address?: { street?: string | null; unit?: string | null; city?: string | null; state?: string | null; zipCode?: string | null } | null;
  geoCenter?: UpstreamGeoPoint | null;
  area?: { id: number; name: string } | null;
  amenities?: { list?: string[]; doormanTypes?: string[]; parkingTypes?: string[]; storageTypes?: string[] } | null;
  policies?: { list?: string[]; petPolicy?: { catsAllowed?: boolean | null; dogsAllowed?: boolean | null } | null } | null;
  additionalDetails?: Record<string, string | null> | null;
  nycData?: {
    communityDistrict?: number | null;
    councilDistrict?: number | null;
    policePrecinct?: number | null;
    buildingClass?: string | null;
    buildingClassDescription?: string | null;
    hasAbatements?: boolean | null;
    hurricaneEvacuationZone?: string | null;
  } | null;
  photos?: { key?: string | null }[] | null;
  rentalInventory?: UpstreamInventory | null;
  saleInventory?: UpstreamInventory | null;
}

/** Building inventory: the same shape upstream and on the wire (spec 2.6). */
export type UpstreamInventory = Inventory;
