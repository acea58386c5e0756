import type { GeoPoint } from '../wire/common.js';
import type { SiteListing, LocalBuilding } from '../upstream/local/site-data.js';
import { BOROUGH_NAME_BY_UPSTREAM_ID, type SiteAreaIndex } from './areas.js';
import { undatedListedAt } from './listing-dates.js';
import { listingNode } from './listing-node.js';
import type { BoroughLand } from './placement.js';
import { readCsv } from '../lib/csv.js';
import { sharedDataFile } from './shared-data.js';

/** Listing ids are 7,000,000 + the row's index in the file (the set gave each row its own listing, ids not published). */
export const RENTHOP_LISTING_ID_BASE = 7_000_000;
/** Building ids are 7,000,000,000 + the index of the first row at the building's point (clear of the sample's 8-digit ids). */
export const RENTHOP_BUILDING_ID_BASE = 7_000_000_000;
/** Plausible monthly rents in dollars, inclusive: below are deposits or typos (43, 45, 401), above are sale prices or typos. */
export const PLAUSIBLE_RENT = { min: 500, max: 50_000 } as const;

/** The file's 4-decimal position without its float noise (-73.96600000000002 is -73.966). */
const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

/**
 * The RentHop rental listings of spring 2016 (`renthop-2016/rent.csv`) that lie on one of the five
 * boroughs' land and ask a plausible rent ({@link PLAUSIBLE_RENT}), each row one ACTIVE rental
 * (rows that look alike are distinct units). Real: rent, bedrooms (0 a studio), bathrooms (whole ones
 * full, a fraction one half bath), position (rounded to the file's 4 decimals). Derived: borough (whose
 * land holds the point), area (the deepest of the site's area outlines holding it, else the borough),
 * building (one per point: units at exactly the same position share it), listing date
 * ({@link undatedListedAt}). Unknown: size, fee, amenities, building type, address but the city.
 */
export function buildRentHopRentals(
  sharedDataDir: string,
  areas: SiteAreaIndex,
  land: BoroughLand,
  asOf: Date,
): { listings: SiteListing[]; buildings: LocalBuilding[] } {
  const rows = readCsv(sharedDataFile(sharedDataDir, 'rentHopRentals'), 'utf8', [
    'bathrooms',
    'bedrooms',
    'price',
    'longitude',
    'latitude',
  ] as const);
  const listings: SiteListing[] = [];
  const buildings = new Map<string, LocalBuilding>();
  /** Borough and area of each distinct point, worked out once a point (10,933 points for 49,352 rows). */
  const places = new Map<string, { borough: number; areaId: number; areaName: string } | null>();
  rows.forEach((row, index) => {
    const price = Number(row.price);
    if (!(price >= PLAUSIBLE_RENT.min && price <= PLAUSIBLE_RENT.max)) return;
    const point: GeoPoint = { latitude: round4(Number(row.latitude)), longitude: round4(Number(row.longitude)) };
    if (!Number.isFinite(point.latitude) || !Number.isFinite(point.longitude)) return;
    const key = `${point.latitude},${point.longitude}`;
    let place = places.get(key);
    if (place === undefined) {
      const borough = land.boroughAt(point);
      const area = borough === null ? undefined : areas.deepestContaining(borough, point);
      place =
        borough === null
          ? null
          : { borough, areaId: area?.numericId ?? borough, areaName: area?.name ?? BOROUGH_NAME_BY_UPSTREAM_ID[borough] };
      places.set(key, place);
    }
    if (!place) return;
    let building = buildings.get(key);
    if (!building) {
      building = {
        id: String(RENTHOP_BUILDING_ID_BASE + index),
        name: null,
        type: null,
        status: null,
        yearBuilt: null,
        unitCount: null,
        address: {
          street: null,
          city: place.borough === 100 ? 'New York' : BOROUGH_NAME_BY_UPSTREAM_ID[place.borough],
          state: 'NY',
          zipCode: null,
        },
        areaId: place.areaId,
        policies: { list: [], petPolicy: null },
      };
      buildings.set(key, building);
    }
    const id = RENTHOP_LISTING_ID_BASE + index;
    const bathrooms = Number(row.bathrooms);
    listings.push({
      kind: 'rental',
      areaId: place.areaId,
      buildingId: building.id,
      node: listingNode({
        id: String(id),
        areaName: place.areaName,
        bedroomCount: Math.floor(Number(row.bedrooms)),
        fullBathroomCount: Math.floor(bathrooms),
        halfBathroomCount: bathrooms % 1 > 0 ? 1 : 0,
        geoPoint: point,
        price: Math.round(price),
        status: 'ACTIVE',
        urlPath: `/rental/${id}`,
        listedAt: undatedListedAt(id, asOf),
      }),
    });
  });
  return { listings, buildings: [...buildings.values()] };
}
