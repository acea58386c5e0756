import { join } from 'node:path';
import { AreaTree, buildAreas } from '../domain/area.js';
import type { GeoPoint } from '../domain/listing.js';
import type { UpstreamArea, UpstreamBuilding } from '../upstream/types.js';
import type { InventoryListing } from '../upstream/local/inventory.js';
import { readCsv } from './read.js';

const DAY_MS = 86_400_000;
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
/** Amenities that belong to the building rather than the unit. */
const BUILDING_AMENITIES = new Set(['DOORMAN', 'ELEVATOR', 'GYM', 'ROOF_DECK']);
const UPSTREAM_BOROUGH_BY_NAME: Record<string, number> = { Manhattan: 100, Bronx: 200, Brooklyn: 300, Queens: 400, 'Staten Island': 500 };

/** Rule for the sample's missing dates: listed `rental_id mod 60` days before the build day. */
export function rentalListedAt(rentalId: number, asOf: Date): string {
  return new Date(asOf.getTime() - (rentalId % 60) * DAY_MS).toISOString();
}

/**
 * Every row of `streeteasy-2016/rentals.csv` as one ACTIVE rental of the local upstream, and one
 * building per `building_id`. Real: id, rent, bedrooms (fractions rounded down), bathrooms (all
 * full), size, no-fee and the seven amenity flags, neighbourhood, building id and age. Derived: position
 * (the neighbourhood's label point), listing date ({@link rentalListedAt}), year built (2016 minus age).
 */
export function buildRentals(
  sharedDataDir: string,
  areas: UpstreamArea[],
  points: Map<number, GeoPoint>,
  asOf: Date,
): { listings: InventoryListing[]; buildings: UpstreamBuilding[] } {
  const rows = readCsv(join(sharedDataDir, 'streeteasy-2016', 'rentals.csv'));
  // Upstream numbering: the five borough ids are the same set as the API's, so AreaTree walks it as well.
  const tree = new AreaTree(buildAreas(areas));
  const areaByBoroughAndName = new Map<string, UpstreamArea>();
  for (const a of areas) areaByBoroughAndName.set(`${tree.boroughOf(a.id)}|${a.name.toLowerCase()}`, a);

  const listings: InventoryListing[] = [];
  const buildingRows = new Map<string, Record<string, string>[]>();
  const firstListing = new Map<string, InventoryListing>();
  for (const row of rows) {
    const borough = UPSTREAM_BOROUGH_BY_NAME[row.borough];
    const area = areaByBoroughAndName.get(`${borough}|${row.neighborhood.toLowerCase()}`);
    const areaId = area?.id ?? borough;
    const id = Number(row.rental_id);
    const amenities = Object.entries(RENTAL_AMENITY_COLUMNS)
      .filter(([column]) => row[column] === '1')
      .map(([, name]) => name);
    const sqft = Number(row.size_sqft);
    const point = points.get(areaId) ?? null;
    const age = Number(row.building_age_yrs);
    listings.push({
      kind: 'rental',
      areaId,
      buildingId: row.building_id,
      node: {
        id: row.rental_id,
        areaId,
        areaName: area?.name ?? row.borough,
        bedroomCount: Math.floor(Number(row.bedrooms)),
        fullBathroomCount: Math.floor(Number(row.bathrooms)),
        halfBathroomCount: Number(row.bathrooms) % 1 > 0 ? 1 : 0,
        buildingType: 'RENTAL',
        geoPoint: point,
        leadMedia: null,
        price: Number(row.rent),
        netEffectivePrice: null,
        monthsFree: null,
        noFee: row.no_fee === '1',
        furnished: null,
        availableAt: null,
        livingAreaSize: sqft > 0 ? sqft : 0,
        sourceGroupLabel: null,
        status: 'ACTIVE',
        street: null,
        unit: null,
        zipCode: null,
        state: 'NY',
        urlPath: `/rental/${row.rental_id}`,
        tier: null,
        hasTour3d: null,
        hasVideos: null,
        upcomingOpenHouse: null,
        listedAt: rentalListedAt(id, asOf),
        amenities,
        petsAllowed: null,
        yearBuilt: Number.isFinite(age) ? DATA_YEAR - age : null,
        buildingId: row.building_id,
      },
    });
    if (!buildingRows.has(row.building_id)) {
      buildingRows.set(row.building_id, []);
      firstListing.set(row.building_id, listings[listings.length - 1]);
    }
    buildingRows.get(row.building_id)!.push(row);
  }

  const buildings: UpstreamBuilding[] = [];
  for (const [buildingId, group] of buildingRows) {
    const first = group[0];
    const listing = firstListing.get(buildingId)!;
    const list = [...new Set(group.flatMap((r) => Object.entries(RENTAL_AMENITY_COLUMNS).filter(([c]) => r[c] === '1').map(([, n]) => n)))]
      .filter((n) => BUILDING_AMENITIES.has(n))
      .sort();
    buildings.push({
      id: buildingId,
      name: null,
      slug: `rental-building-${buildingId}`,
      type: 'Rental building',
      status: 'COMPLETED',
      yearBuilt: listing.node.yearBuilt,
      floorCount: null,
      unitCount: null,
      address: { street: null, unit: null, city: first.borough === 'Manhattan' ? 'New York' : first.borough, state: 'NY', zipCode: null },
      geoCenter: listing.node.geoPoint ?? null,
      area: { id: listing.areaId, name: listing.node.areaName ?? '' },
      amenities: { list, doormanTypes: list.includes('DOORMAN') ? ['DOORMAN'] : [], parkingTypes: [], storageTypes: [] },
      policies: { list: [], petPolicy: null },
      additionalDetails: null,
      nycData: null,
      photos: [],
    });
  }
  return { listings, buildings };
}
