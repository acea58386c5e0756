/**
 * GraphQL documents the client sends. The base fields are the ones public clients of the real site
 * read; the extension fields are asked for only from the local upstream (`UPSTREAM_EXTENDED_FIELDS`).
 */
const BASE_NODE_FIELDS = `id areaName bedroomCount fullBathroomCount halfBathroomCount buildingType
  geoPoint { latitude longitude } leadMedia { photo { key } } price netEffectivePrice monthsFree noFee furnished
  availableAt livingAreaSize sourceGroupLabel status street unit zipCode state urlPath tier hasTour3d hasVideos
  upcomingOpenHouse { startTime endTime }`;
const SALE_FIELDS = `saleType daysOnMarket monthlyTaxes monthlyMaintenance monthlyCommonCharges`;
const EXTENSION_FIELDS = `areaId listedAt amenities petsAllowed yearBuilt buildingId`;
const DETAIL_FIELDS = `rooms leaseTermMonths fees { typeLabel requirement refundability calcType amount timing occurrence }
  contacts { name phone sourceGroup } photos { key } floorPlan { key } priceHistory { date price event }`;
const BUILDING_FIELDS = `id name slug type status yearBuilt floorCount unitCount
  address { street unit city state zipCode } geoCenter { latitude longitude } area { id name }
  amenities { list doormanTypes parkingTypes storageTypes } policies { list petPolicy { catsAllowed dogsAllowed } }
  additionalDetails { developer architect interiors manager owner website }
  nycData { communityDistrict councilDistrict policePrecinct buildingClass buildingClassDescription hasAbatements hurricaneEvacuationZone }
  photos { key }
  rentalInventory { activeCount byBedroom { bedrooms availableCount minPrice maxPrice historicalCount historicalMinPrice historicalMaxPrice } }
  saleInventory { activeCount byBedroom { bedrooms availableCount minPrice maxPrice historicalCount historicalMinPrice historicalMaxPrice } }`;

function nodeFields(kind: 'sale' | 'rental', extended: boolean, detail: boolean): string {
  return [BASE_NODE_FIELDS, kind === 'sale' ? SALE_FIELDS : '', extended ? EXTENSION_FIELDS : '', detail ? DETAIL_FIELDS : ''].join(' ');
}

export function searchQuery(kind: 'sale' | 'rental', extended: boolean): string {
  const [field, type, prefix] = kind === 'sale' ? ['searchSales', 'SearchSalesInput', 'Sale'] : ['searchRentals', 'SearchRentalsInput', 'Rental'];
  const fields = nodeFields(kind, extended, false);
  return `query Search($input: ${type}!) { ${field}(input: $input) { totalCount pageInfo { currentPage hasNextPage totalPages }
    edges { __typename
      ... on Organic${prefix}Edge { node { ${fields} } }
      ... on Featured${prefix}Edge { node { ${fields} } }
      ... on Sponsored${prefix}Edge { node { ${fields} } } } } }`;
}

export function listingQuery(kind: 'sale' | 'rental', extended: boolean): string {
  const field = kind === 'sale' ? 'saleByListingId' : 'rentalByListingId';
  return `query Listing($id: ID!) { listing: ${field}(id: $id) { ${nodeFields(kind, extended, true)} } }`;
}

export function buildingOfListingQuery(kind: 'sale' | 'rental'): string {
  const field = kind === 'sale' ? 'buildingBySaleListingId' : 'buildingByRentalListingId';
  return `query BuildingOfListing($id: ID!) { building: ${field}(id: $id) { ${BUILDING_FIELDS} } }`;
}

export const BUILDING_QUERY = `query Building($idOrSlug: String!) { building(idOrSlug: $idOrSlug) { ${BUILDING_FIELDS} } }`;
export const AREAS_QUERY = `query Areas { areas { id name parentId } }`;
