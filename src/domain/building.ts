import type { Address, GeoPoint } from './listing.js';

/** Units of one bedroom count in a building: counts and prices in dollars (spec 2.6). */
export interface ByBedroom {
  bedrooms: string;
  availableCount: number;
  minPrice: number | null;
  maxPrice: number | null;
  historicalCount: number;
  historicalMinPrice: number | null;
  historicalMaxPrice: number | null;
}

export interface Inventory {
  activeCount: number;
  byBedroom: ByBedroom[];
}

/** Building detail on the wire (spec 2.6). Unknown values are null. */
export interface Building {
  id: string;
  name: string | null;
  slug: string;
  type: string | null;
  status: string | null;
  yearBuilt: number | null;
  floorCount: number | null;
  unitCount: number | null;
  address: Address;
  geoCenter: GeoPoint | null;
  area: { id: number; name: string; slug: string; breadcrumbs: { name: string; url: string }[] } | null;
  amenities: { list: string[]; doormanTypes: string[]; parkingTypes: string[]; storageTypes: string[] };
  policies: { list: string[]; petPolicy: { catsAllowed: boolean | null; dogsAllowed: boolean | null } | null };
  additionalDetails: {
    developer: string | null;
    architect: string | null;
    interiors: string | null;
    manager: string | null;
    owner: string | null;
    website: string | null;
  };
  nycData: {
    communityDistrict: number | null;
    councilDistrict: number | null;
    policePrecinct: number | null;
    buildingClass: string | null;
    buildingClassDescription: string | null;
    hasAbatements: boolean | null;
    hurricaneEvacuationZone: string | null;
  } | null;
  photos: string[];
  rentalInventory: Inventory;
  saleInventory: Inventory;
}
