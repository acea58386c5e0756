/**
 * The subset of the upstream site's GraphQL schema the project uses (../shared/data/README.md), plus
 * the local upstream's extension fields (listing date, area id, amenities, year built, building id) and
 * building/area look-ups.
 */
export const LOCAL_UPSTREAM_SDL = /* GraphQL */ `
  type Query {
    searchRentals(input: SearchRentalsInput!): RentalSearchResult!
    searchSales(input: SearchSalesInput!): SaleSearchResult!
    rentalByListingId(id: ID!): Rental
    saleByListingId(id: ID!): Sale
    buildingByRentalListingId(id: ID!): Building
    buildingBySaleListingId(id: ID!): Building
    building(idOrSlug: String!): Building
    areas: [Area!]!
  }

  enum ListingStatus { ACTIVE }
  enum SortAttribute { RECOMMENDED LISTED_AT PRICE }
  enum SortDirection { ASCENDING DESCENDING }
  enum AdStrategy { NONE }

  input Bound { lowerBound: Float, upperBound: Float }
  input GeoPointInput { latitude: Float!, longitude: Float! }
  input BoundingBox { topLeft: GeoPointInput!, bottomRight: GeoPointInput! }
  input Sorting { attribute: SortAttribute!, direction: SortDirection! }

  input RentalFilters {
    areas: [Int!], rentalStatus: ListingStatus, price: Bound, bedrooms: Bound, bathrooms: Bound,
    amenities: [String!], petsAllowed: Boolean, boundingBox: BoundingBox
  }
  input SaleFilters {
    areas: [Int!], saleStatus: ListingStatus, price: Bound, bedrooms: Bound, bathrooms: Bound,
    amenities: [String!], petsAllowed: Boolean, boundingBox: BoundingBox
  }
  input SearchRentalsInput {
    filters: RentalFilters, page: Int, perPage: Int, sorting: Sorting, userSearchToken: String, adStrategy: AdStrategy
  }
  input SearchSalesInput {
    filters: SaleFilters, page: Int, perPage: Int, sorting: Sorting, userSearchToken: String, adStrategy: AdStrategy
  }

  type PageInfo { currentPage: Int!, hasNextPage: Boolean!, totalPages: Int! }
  type GeoPoint { latitude: Float, longitude: Float }
  type Photo { key: String }
  type Media { photo: Photo }
  type OpenHouse { startTime: String, endTime: String }
  type Fee {
    typeLabel: String, requirement: String, refundability: String, calcType: String,
    amount: Float, timing: String, occurrence: String
  }
  type Contact { name: String, phone: String, sourceGroup: String }
  type PriceEvent { date: String!, price: Float!, event: String! }

  interface Listing {
    id: ID!
    price: Float!
  }

  type Rental implements Listing {
    id: ID!, areaName: String, bedroomCount: Int, fullBathroomCount: Int, halfBathroomCount: Int,
    buildingType: String, geoPoint: GeoPoint, leadMedia: Media, price: Float!, netEffectivePrice: Float,
    monthsFree: Float, noFee: Boolean, furnished: Boolean, availableAt: String, livingAreaSize: Float,
    sourceGroupLabel: String, status: String, street: String, unit: String, zipCode: String, state: String,
    urlPath: String, tier: String, hasTour3d: Boolean, hasVideos: Boolean, upcomingOpenHouse: OpenHouse,
    areaId: Int, listedAt: String, amenities: [String!], petsAllowed: Boolean, yearBuilt: Int, buildingId: String,
    rooms: Float, leaseTermMonths: Float, fees: [Fee!], contacts: [Contact!], photos: [Photo!], floorPlan: Photo,
    priceHistory: [PriceEvent!]
  }

  type Sale implements Listing {
    id: ID!, areaName: String, bedroomCount: Int, fullBathroomCount: Int, halfBathroomCount: Int,
    buildingType: String, geoPoint: GeoPoint, leadMedia: Media, price: Float!, netEffectivePrice: Float,
    monthsFree: Float, noFee: Boolean, furnished: Boolean, availableAt: String, livingAreaSize: Float,
    sourceGroupLabel: String, status: String, street: String, unit: String, zipCode: String, state: String,
    urlPath: String, tier: String, hasTour3d: Boolean, hasVideos: Boolean, upcomingOpenHouse: OpenHouse,
    saleType: String, daysOnMarket: Int, monthlyTaxes: Float, monthlyMaintenance: Float, monthlyCommonCharges: Float,
    areaId: Int, listedAt: String, amenities: [String!], petsAllowed: Boolean, yearBuilt: Int, buildingId: String,
    rooms: Float, leaseTermMonths: Float, fees: [Fee!], contacts: [Contact!], photos: [Photo!], floorPlan: Photo,
    priceHistory: [PriceEvent!]
  }

  type OrganicRentalEdge { node: Rental! }
  type FeaturedRentalEdge { node: Rental! }
  type SponsoredRentalEdge { node: Rental! }
  union RentalEdge = OrganicRentalEdge | FeaturedRentalEdge | SponsoredRentalEdge
  type RentalSearchResult { totalCount: Int!, pageInfo: PageInfo!, edges: [RentalEdge!]! }

  type OrganicSaleEdge { node: Sale! }
  type FeaturedSaleEdge { node: Sale! }
  type SponsoredSaleEdge { node: Sale! }
  union SaleEdge = OrganicSaleEdge | FeaturedSaleEdge | SponsoredSaleEdge
  type SaleSearchResult { totalCount: Int!, pageInfo: PageInfo!, edges: [SaleEdge!]! }

  type Address { street: String, unit: String, city: String, state: String, zipCode: String }
  type BuildingArea { id: Int!, name: String! }
  type BuildingAmenities { list: [String!]!, doormanTypes: [String!]!, parkingTypes: [String!]!, storageTypes: [String!]! }
  type PetPolicy { catsAllowed: Boolean, dogsAllowed: Boolean }
  type BuildingPolicies { list: [String!]!, petPolicy: PetPolicy }
  type AdditionalDetails { developer: String, architect: String, interiors: String, manager: String, owner: String, website: String }
  type NycData {
    communityDistrict: Int, councilDistrict: Int, policePrecinct: Int, buildingClass: String,
    buildingClassDescription: String, hasAbatements: Boolean, hurricaneEvacuationZone: String
  }
  type ByBedroom {
    bedrooms: String!, availableCount: Int!, minPrice: Float, maxPrice: Float,
    historicalCount: Int!, historicalMinPrice: Float, historicalMaxPrice: Float
  }
  type Inventory { activeCount: Int!, byBedroom: [ByBedroom!]! }
  type Building {
    id: ID!, name: String, slug: String!, type: String, status: String, yearBuilt: Int, floorCount: Int, unitCount: Int,
    address: Address, geoCenter: GeoPoint, area: BuildingArea, amenities: BuildingAmenities, policies: BuildingPolicies,
    additionalDetails: AdditionalDetails, nycData: NycData, photos: [Photo!], rentalInventory: Inventory, saleInventory: Inventory
  }

  type Area { id: Int!, name: String!, parentId: Int }
`;
