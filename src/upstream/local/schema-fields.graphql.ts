// The object fields the local upstream's schema (schema.graphql.ts) shares between types, one a line.

/** Search node fields, the same for rentals and sales (clients ask both alike). */
export const SEARCH_NODE_FIELDS = `  id: ID!
  areaName: String
  bedroomCount: Int
  fullBathroomCount: Int
  halfBathroomCount: Int
  buildingType: String
  geoPoint: GeoPoint
  leadMedia: LeadMedia
  price: Int
  sourceGroupLabel: String
  status: String
  street: String
  unit: String
  urlPath: String
  tier: String
  relloExpress: Boolean
  availableAt: String
  furnished: Boolean
  hasTour3d: Boolean
  hasVideos: Boolean
  isNewDevelopment: Boolean
  leaseTermMonths: Int
  livingAreaSize: Float
  monthsFree: Float
  noFee: Boolean
  netEffectivePrice: Int
  offMarketAt: String
  photos: [Photo]
  priceChangedAt: String
  priceDelta: Int
  slug: String
  sourceType: String
  upcomingOpenHouse: OpenHouse`;

/** Detail fields rentals and sales share (clients ask both alike); pricing and history differ. */
export const DETAIL_FIELDS = `  id: ID!
  status: String
  createdAt: String
  updatedAt: String
  availableAt: String
  offMarketAt: String
  buildingId: ID
  description: String
  statusChanges: [StatusChange]
  media: ListingMedia
  propertyDetails: PropertyDetails`;
