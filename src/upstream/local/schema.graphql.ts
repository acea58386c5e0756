/**
 * The local upstream's GraphQL schema: only what ../shared/data/upstream-api.md grades confirmed (a real
 * answer shows it) or seen in clients (two or more independent public clients ask for it). Nothing
 * else: a client proven against a richer schema would fail against the real site. Type names the
 * document does not give are placeholders; enum names follow the one quoted error message
 * (`SortingAttributeInput`). Object fields are one a line so that tests can remove one (drift).
 */
import { DETAIL_FIELDS, SEARCH_NODE_FIELDS } from './schema-fields.graphql.js';

export const LOCAL_UPSTREAM_SDL = /* GraphQL */ `
type Query {
  searchRentals(input: SearchRentalsInput!): RentalSearchResult
  searchSales(input: SearchSalesInput!): SaleSearchResult
  rentalByListingId(id: ID!): RentalListing
  saleByListingId(id: ID!): SaleListing
  buildingByRentalListingId(id: ID!): Building
  buildingBySaleListingId(id: ID!): Building
  areas: [Area!]!
}

enum ListingStatusInput { ACTIVE }
enum SortingAttributeInput { RECOMMENDED LISTED_AT PRICE SQFT }
enum SortingDirectionInput { ASCENDING DESCENDING }
enum AdStrategyInput { NONE }
enum AmenityInput {
  WASHER_DRYER DISHWASHER PRIVATE_OUTDOOR_SPACE CENTRAL_AC FURNISHED FIREPLACE DOORMAN LAUNDRY ELEVATOR GYM PARKING
  SHARED_OUTDOOR_SPACE POOL STORAGE_SPACE
}

input BoundInput { lowerBound: Float, upperBound: Float }
input GeoPointInput { latitude: Float!, longitude: Float! }
input BoundingBoxInput { topLeft: GeoPointInput!, bottomRight: GeoPointInput! }
input SortingInput { attribute: SortingAttributeInput!, direction: SortingDirectionInput! }
input DateRangeInput { startDate: String, endDate: String }
input RentalFiltersInput {
  rentalStatus: ListingStatusInput, areas: [Int!], price: BoundInput, bedrooms: BoundInput, boundingBox: BoundingBoxInput,
  bathrooms: BoundInput, amenities: [AmenityInput!], petsAllowed: Boolean, available: DateRangeInput
}
input SaleFiltersInput {
  saleStatus: ListingStatusInput, areas: [Int!], price: BoundInput, bedrooms: BoundInput, boundingBox: BoundingBoxInput,
  bathrooms: BoundInput, amenities: [AmenityInput!], petsAllowed: Boolean
}
input SearchRentalsInput {
  filters: RentalFiltersInput, page: Int, perPage: Int, sorting: SortingInput, userSearchToken: String, adStrategy: AdStrategyInput
}
input SearchSalesInput {
  filters: SaleFiltersInput, page: Int, perPage: Int, sorting: SortingInput, userSearchToken: String, adStrategy: AdStrategyInput
}

type Search {
  criteria: String
}

type GeoPoint {
  latitude: Float
  longitude: Float
}

type Photo {
  key: String
}

type LeadMedia {
  photo: Photo
}

type OpenHouse {
  startTime: String
  endTime: String
}

type RentalSearchNode {
${SEARCH_NODE_FIELDS}
}

type SaleSearchNode {
${SEARCH_NODE_FIELDS}
}

type OrganicRentalEdge {
  node: RentalSearchNode!
}
type FeaturedRentalEdge {
  node: RentalSearchNode!
}
type SponsoredRentalEdge {
  node: RentalSearchNode!
}
union RentalEdge = OrganicRentalEdge | FeaturedRentalEdge | SponsoredRentalEdge

type RentalSearchResult {
  totalCount: Int
  edges: [RentalEdge]
  search: Search
}

type OrganicSaleEdge {
  node: SaleSearchNode!
}
type FeaturedSaleEdge {
  node: SaleSearchNode!
}
type SponsoredSaleEdge {
  node: SaleSearchNode!
}
union SaleEdge = OrganicSaleEdge | FeaturedSaleEdge | SponsoredSaleEdge

type SaleSearchResult {
  totalCount: Int
  edges: [SaleEdge]
  search: Search
}

type StatusChange {
  status: String
  changedAt: String
}

type Video {
  id: ID
}

type ListingMedia {
  photos: [Photo]
  floorPlans: [Photo]
  tour3dUrl: String
  videos: [Video]
}

type DetailAddress {
  street: String
  houseNumber: String
  streetName: String
  city: String
  state: String
  zipCode: String
  unit: String
}

type PropertyAmenities {
  list: [String]
  doormanTypes: [String]
  parkingTypes: [String]
  storageSpaceTypes: [String]
}

type Features {
  list: [String]
}

type PropertyDetails {
  address: DetailAddress
  roomCount: Float
  bedroomCount: Int
  fullBathroomCount: Int
  halfBathroomCount: Int
  livingAreaSize: Float
  amenities: PropertyAmenities
  features: Features
}

type PriceChange {
  changedAt: String
}

type RentalPricing {
  price: Int
  noFee: Boolean
  monthsFree: Float
  leaseTermMonths: Int
  priceDelta: Int
  priceChanges: [PriceChange]
}

type SalePricing {
  price: Int
  maintenanceFee: Float
  taxes: Float
}

type RentalEvent {
  date: String
  price: Int
}

type PropertyHistory {
  listingId: ID
  sourceGroupLabel: String
  offMarketAt: String
  rentalEventsOfInterest: [RentalEvent]
}

type RentalListing {
${DETAIL_FIELDS}
  pricing: RentalPricing
  upcomingOpenHouses: [OpenHouse]
  propertyHistory: [PropertyHistory]
}

type SaleListing {
${DETAIL_FIELDS}
  pricing: SalePricing
  upcomingOpenHouses: [OpenHouse]
}

type BuildingAddress {
  street: String
  city: String
  state: String
  zipCode: String
}

type BuildingMedia {
  photos: [Photo]
}

type BuildingArea {
  name: String
}

type PetPolicy {
  catsAllowed: Boolean
  dogsAllowed: Boolean
}

type Policies {
  list: [String]
  petPolicy: PetPolicy
}

type TransitStation {
  name: String
  distance: Float
  routes: [String]
}

type Nearby {
  transitStations: [TransitStation]
}

type Building {
  id: ID!
  name: String
  type: String
  residentialUnitCount: Int
  yearBuilt: Int
  status: String
  address: BuildingAddress
  media: BuildingMedia
  area: BuildingArea
  policies: Policies
  nearby: Nearby
}

type Geometry {
  encodedBoundary: String
}

type Area {
  id: ID!
  name: String!
  numericId: Int!
  parentId: Int
  geometry: Geometry
}
`;

/**
 * The schema text without the fields named `Type.field` (a field the site has dropped: drift).
 * @throws Error when a named field is not in the schema.
 */
export function sdlWithout(removed: Iterable<string>): string {
  let sdl = LOCAL_UPSTREAM_SDL;
  for (const name of removed) {
    const [type, field] = name.split('.');
    const block = new RegExp(`(type ${type} \\{[^}]*?)\\n  ${field}: [^\\n]+`);
    if (!block.test(sdl)) throw new Error(`no field ${name} in the local upstream's schema`);
    sdl = sdl.replace(block, '$1');
  }
  return sdl;
}
