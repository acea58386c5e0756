import type { Address, GeoPoint } from '../wire/common.js';
import type { Contact, Fee, PriceEvent } from '../wire/listing.js';

/**
 * Listings as the store keeps them, and their rules (days on market, price per square foot); the wire
 * shapes are in `src/wire/listing.ts`. Money is in US dollars (rent a month for rentals, asking price
 * for sales), areas in square feet, dates and instants in UTC.
 */
export type ListingKind = 'sale' | 'rental';

/** Both kinds, rentals first: the order the crawls and the search index read them in. */
export const LISTING_KINDS: readonly ListingKind[] = ['rental', 'sale'];

/**
 * Everything the mirror knows of one listing: the upstream's fields after mapping (ids in the API's
 * numbering) plus what the service derives (transit score, recommended score).
 */
export interface ListingRecord {
  id: string;
  kind: ListingKind;
  status: string;
  areaId: number | null;
  boroughId: number | null;
  areaName: string | null;
  address: Address;
  price: number;
  bedroomCount: number | null;
  fullBathroomCount: number | null;
  halfBathroomCount: number | null;
  buildingType: string | null;
  geoPoint: GeoPoint | null;
  leadPhotoKey: string | null;
  sourceGroupLabel: string | null;
  urlPath: string | null;
  tier: string | null;
  /** Instant the listing went on the market (UTC ISO 8601), null when unknown. */
  listedAt: string | null;
  netEffective: number | null;
  monthsFree: number | null;
  sqft: number | null;
  rooms: number | null;
  leaseTerm: number | null;
  furnished: boolean | null;
  availableAt: string | null;
  saleType: string | null;
  noFee: boolean | null;
  petsAllowed: boolean | null;
  amenities: string[];
  has3dTour: boolean | null;
  hasVideo: boolean | null;
  openHouseStart: string | null;
  openHouseEnd: string | null;
  monthlyTaxes: number | null;
  monthlyMaintenance: number | null;
  monthlyCommonCharges: number | null;
  yearBuilt: number | null;
  buildingId: string | null;
  buildingSlug: string | null;
  fees: Fee[];
  contacts: Contact[];
  photos: string[];
  floorPlanKey: string | null;
  /** Price events the upstream reported (the mirror adds its own on each sync). */
  upstreamPriceHistory: PriceEvent[];
}

const DAY_MS = 86_400_000;

/**
 * What a listing's detail answer adds to its search node (hydration): the listing date, amenities,
 * building, address completions, sale charges, photos and floor plan, open house. Unknown values are null.
 */
export interface HydratedFacts {
  status: string | null;
  listedAt: string | null;
  amenities: string[];
  buildingId: string | null;
  zipCode: string | null;
  rooms: number | null;
  leaseTerm: number | null;
  availableAt: string | null;
  monthlyMaintenance: number | null;
  monthlyTaxes: number | null;
  photos: string[];
  floorPlanKey: string | null;
  openHouseStart: string | null;
  openHouseEnd: string | null;
  /** From the building's pet policy: cats or dogs allowed. */
  petsAllowed: boolean | null;
  /** From the building. */
  yearBuilt: number | null;
}

/** Whole days between the listing date and `now` (UTC); null when the listing date is unknown. */
export function daysOnMarket(listedAt: string | null, now: Date): number | null {
  if (!listedAt) return null;
  return Math.max(0, Math.floor((now.getTime() - Date.parse(listedAt)) / DAY_MS));
}

/** Price per square foot in dollars, rounded to cents; null without a known positive area. */
export function pricePerSqft(price: number, sqft: number | null): number | null {
  if (!sqft || sqft <= 0) return null;
  return Math.round((price / sqft) * 100) / 100;
}

/** Amenity names the upstream site uses as filter values (open set; these are the known ones). */
export const KNOWN_AMENITIES = ['DOORMAN', 'ELEVATOR', 'GYM', 'ROOF_DECK', 'WASHER_DRYER', 'DISHWASHER', 'PATIO'] as const;

/** Building types seen on the upstream site (open set; ../shared/data/upstream-api.md). */
export const KNOWN_BUILDING_TYPES = [
  'RENTAL',
  'CONDO',
  'CO_OP',
  'TOWNHOUSE',
  'HOUSE',
  'MIXED_USE',
  'TWOFAMILY',
  'THREEFAMILY',
  'FOURFAMILY',
  'MULTIFAMILY',
  'HYBRID',
  'COMMERCIAL',
] as const;

/** Sale types the sales search accepts (spec 4.1). */
export const SALE_TYPES = ['RESALE', 'SPONSOR_UNIT', 'FORECLOSURE'] as const;
