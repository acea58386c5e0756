import type { SiteListing, LocalBuilding } from '../upstream/local/site-data.js';
import { UPSTREAM_BOROUGH_BY_NAME, type SiteAreaIndex } from './areas.js';
import type { BoroughLand } from './placement.js';
import { undatedListedAt } from './listing-dates.js';
import { listingNode } from './listing-node.js';
import { readCsv } from '../lib/csv.js';
import { sharedDataFile } from './shared-data.js';

const DATA_YEAR = 2016;

/** CSV amenity flag -> upstream amenity name. */
export const RENTAL_AMENITY_COLUMNS: Readonly<Record<string, string>> = {
  has_doorman: 'DOORMAN',
  has_elevator: 'ELEVATOR',
  has_gym: 'GYM',
  has_roofdeck: 'ROOF_DECK',
  has_washer_dryer: 'WASHER_DRYER',
  has_dishwasher: 'DISHWASHER',
  has_patio: 'PATIO',
};
/** Sample neighbourhood names the site's area list spells otherwise. */
const NEIGHBORHOOD_ALIASES: Readonly<Record<string, string>> = { 'rockaway all': 'the rockaways' };

/**
 * Every row of `streeteasy-2016/rentals.csv` as one ACTIVE rental of the local upstream, and one
 * building per `building_id`. Real: id, rent, bedrooms (fractions rounded down), bathrooms (all
 * full), size, no-fee and the seven amenity flags, neighbourhood, building id and age. The area is the
 * site's area of that name in that borough (names repeat across boroughs), else the borough. Derived:
 * position ({@link BoroughLand.place}: inside the area's real outline and the borough's land, one
 * point per building and area), listing date ({@link undatedListedAt}), year built (2016 minus age).
 */
export function buildStreetEasyRentals(
  sharedDataDir: string,
  areas: SiteAreaIndex,
  land: BoroughLand,
  asOf: Date,
): { listings: SiteListing[]; buildings: LocalBuilding[] } {
  const rows = readCsv(sharedDataFile(sharedDataDir, 'streetEasyRentals'));
  const listings: SiteListing[] = [];
  const buildings = new Map<string, LocalBuilding>();
  const positions = new Map<string, { latitude: number; longitude: number }>();
  for (const row of rows) {
    const borough = UPSTREAM_BOROUGH_BY_NAME[row.borough];
    const name = row.neighborhood.toLowerCase();
    const area = areas.find(borough, NEIGHBORHOOD_ALIASES[name] ?? name);
    const areaId = area?.numericId ?? borough;
    const id = Number(row.rental_id);
    const amenities = Object.entries(RENTAL_AMENITY_COLUMNS)
      .filter(([column]) => row[column] === '1')
      .map(([, amenity]) => amenity);
    const sqft = Number(row.size_sqft);
    const age = Number(row.building_age_yrs);
    const yearBuilt = Number.isFinite(age) ? DATA_YEAR - age : null;
    // Units of one building share a point; the sample files a few buildings under two neighbourhoods,
    // and each listing stays inside its own neighbourhood's outline.
    const placeKey = `rental-building:${row.building_id}:${areaId}`;
    let point = positions.get(placeKey);
    if (!point) {
      point = land.place(placeKey, borough, areas.outline(areaId));
      positions.set(placeKey, point);
    }
    listings.push({
      kind: 'rental',
      areaId,
      buildingId: row.building_id,
      node: listingNode({
        id: row.rental_id,
        areaName: area?.name ?? row.borough,
        bedroomCount: Math.floor(Number(row.bedrooms)),
        fullBathroomCount: Math.floor(Number(row.bathrooms)),
        halfBathroomCount: Number(row.bathrooms) % 1 > 0 ? 1 : 0,
        buildingType: 'RENTAL',
        geoPoint: point,
        price: Number(row.rent),
        noFee: row.no_fee === '1',
        livingAreaSize: sqft > 0 ? sqft : 0,
        status: 'ACTIVE',
        urlPath: `/rental/${row.rental_id}`,
        listedAt: undatedListedAt(id, asOf),
        amenities,
        yearBuilt,
      }),
    });
    if (buildings.has(row.building_id)) continue;
    buildings.set(row.building_id, {
      id: row.building_id,
      name: null,
      type: 'Rental building',
      status: 'COMPLETED',
      yearBuilt,
      unitCount: null,
      address: { street: null, city: row.borough === 'Manhattan' ? 'New York' : row.borough, state: 'NY', zipCode: null },
      areaId,
      policies: { list: [], petPolicy: null },
    });
  }
  return { listings, buildings: [...buildings.values()] };
}
