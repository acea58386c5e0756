import type { SiteArea } from '../types.js';

/**
 * One listing as the local upstream holds it (its own record, not a wire shape): every fact the
 * dataset builders found or derived. The GraphQL presenters answer from it only what the real site is
 * known to answer (../shared/data/upstream-api.md).
 */
export interface LocalListingNode {
  id: string;
  areaName: string | null;
  bedroomCount: number | null;
  fullBathroomCount: number | null;
  halfBathroomCount: number | null;
  buildingType: string | null;
  geoPoint: { latitude: number; longitude: number } | null;
  leadPhotoKey: string | null;
  /** US dollars: rent a month, or the asking price. */
  price: number;
  netEffectivePrice: number | null;
  monthsFree: number | null;
  noFee: boolean | null;
  furnished: boolean | null;
  availableAt: string | null;
  /** Square feet; 0 means unknown (as the site answers). */
  livingAreaSize: number;
  sourceGroupLabel: string | null;
  /** `ACTIVE`, `OFF_MARKET`, or `UPCOMING` (held back by the market clock, never shown). */
  status: string;
  street: string | null;
  unit: string | null;
  zipCode: string | null;
  state: string;
  urlPath: string;
  tier: string | null;
  hasTour3d: boolean | null;
  hasVideos: boolean | null;
  /** When it went on the market (UTC ISO 8601): the detail's `createdAt`. */
  listedAt: string | null;
  amenities: string[];
  petsAllowed: boolean | null;
  yearBuilt: number | null;
  /** Sales: monthly maintenance and taxes in dollars, when known. */
  monthlyMaintenance?: number | null;
  monthlyTaxes?: number | null;
}

/** One listing of the local upstream: kind, its area (upstream numbering), building and record. */
export interface SiteListing {
  kind: 'sale' | 'rental';
  /** Upstream numeric id of the listing's area. */
  areaId: number;
  buildingId: string | null;
  node: LocalListingNode;
}

/** A building as the local upstream holds it. */
export interface LocalBuilding {
  id: string;
  name: string | null;
  type: string | null;
  status: string | null;
  yearBuilt: number | null;
  unitCount: number | null;
  address: { street: string | null; city: string | null; state: string | null; zipCode: string | null };
  /** Upstream numeric id of its area. */
  areaId: number;
  policies: { list: string[]; petPolicy: { catsAllowed: boolean | null; dogsAllowed: boolean | null } | null };
}

/**
 * The local upstream's whole market, built from the real public data under `../shared/data` as of
 * `asOf` (UTC midnight of the build day): the site's own area list (served as captured), listings and
 * buildings in the site's area numbering.
 */
export interface SiteData {
  asOf: Date;
  areas: SiteArea[];
  listings: SiteListing[];
  buildings: LocalBuilding[];
}
