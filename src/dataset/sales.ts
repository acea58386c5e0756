import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { slugify } from '../domain/area.js';
import type { GeoPoint } from '../domain/listing.js';
import type { UpstreamArea, UpstreamBuilding } from '../upstream/types.js';
import { normalizeStreet, titleCase } from './address.js';
import { buildingClassDescription } from './building-classes.js';
import { DOF_NEIGHBORHOOD_AREA } from './dof-neighborhoods.js';
import type { InventoryListing } from '../upstream/local/inventory.js';
import type { PlutoLot } from './pluto.js';
import { readCsv } from './read.js';

/** Sales ids are 1,000,000 + the row's index in the file, clear of the rental sample's ids. */
const SALE_ID_BASE = 1_000_000;
/** DOF categories that are not homes: billing lots and commercial condos. */
const NON_RESIDENTIAL = new Set(['11', '28']);

/** Upstream building type of a DOF building class category (first two characters) and class. */
export function saleBuildingType(category: string, buildingClass: string): string {
  if (buildingClass.startsWith('S')) return 'MIXED_USE';
  const code = category.slice(0, 2);
  if (code === '01') return 'TOWNHOUSE';
  if (['04', '12', '13', '15', '16'].includes(code)) return 'CONDO';
  if (['09', '10', '17'].includes(code)) return 'CO_OP';
  return 'MULTI_FAMILY';
}

const BUILDING_LABEL: Record<string, string> = {
  TOWNHOUSE: 'Townhouse',
  CONDO: 'Condo building',
  CO_OP: 'Co-op building',
  MULTI_FAMILY: 'Multi-family building',
  MIXED_USE: 'Mixed-use building',
};

/** A row is a residential sale when its category is not 11 or 28 and its price is at least $10,000. */
export function isResidentialSale(row: Record<string, string>): boolean {
  return !NON_RESIDENTIAL.has(row.building_class_category.slice(0, 2)) && Number(row.sale_price) >= 10_000;
}

/** Building id for a sale: the PLUTO BBL, else `9` + nine digits of the SHA-1 of address and zip. */
function buildingIdFor(lot: PlutoLot | undefined, key: string): string {
  if (lot) return lot.bbl;
  return '9' + String(parseInt(createHash('sha1').update(key).digest('hex').slice(0, 12), 16) % 1_000_000_000).padStart(9, '0');
}

/**
 * Each residential row of `rolling-sales/manhattan-2022-2023.csv` (see {@link isResidentialSale}) as
 * one ACTIVE sale, and one building per normalised address and zip, joined to PLUTO where it can be.
 * Real: price (the recorded sale price stands in for the asking price), address, unit, zip, building
 * class, year built (the sale row's; the building's from PLUTO first), gross square feet of one-unit rows, PLUTO facts. Derived: listing date (sale date
 * shifted so the newest falls on `asOf`), sale type (built 2020 or later: SPONSOR_UNIT, else RESALE),
 * position (PLUTO lot, else the neighbourhood's label point).
 */
export function buildSales(
  sharedDataDir: string,
  areas: UpstreamArea[],
  points: Map<number, GeoPoint>,
  pluto: Map<string, PlutoLot>,
  asOf: Date,
): { listings: InventoryListing[]; buildings: UpstreamBuilding[] } {
  const rows = readCsv(join(sharedDataDir, 'rolling-sales', 'manhattan-2022-2023.csv'));
  const manhattanByName = new Map(areas.map((a) => [a.name.toLowerCase(), a]));
  const areaName = new Map(areas.map((a) => [a.id, a.name]));
  const newest = Math.max(...rows.map((r) => Date.parse(`${r.sale_date}T00:00:00Z`)));
  const shift = asOf.getTime() - newest;

  const listings: InventoryListing[] = [];
  const buildings = new Map<string, UpstreamBuilding>();
  const usedUrls = new Set<string>();
  rows.forEach((row, index) => {
    if (!isResidentialSale(row)) return;
    const areaId = DOF_NEIGHBORHOOD_AREA[row.neighborhood] ?? manhattanByName.get(row.neighborhood.toLowerCase())?.id ?? 100;
    const street = row.address.split(',')[0].trim();
    const unit = (row.apartment_number || row.address.split(',')[1] || '').trim() || null;
    const key = `${normalizeStreet(street)}|${row.zip_code}`;
    const lot = pluto.get(key);
    const buildingId = buildingIdFor(lot, key);
    const type = saleBuildingType(row.building_class_category, row.building_class_at_present);
    const yearBuilt = Number(row.year_built) > 0 ? Math.round(Number(row.year_built)) : null;
    const position = lot?.position ?? points.get(areaId) ?? null;
    const elevator = row.building_class_category.includes('ELEVATOR');
    let building = buildings.get(buildingId);
    if (!building) {
      const slug = `${slugify(normalizeStreet(street))}-manhattan`;
      building = {
        id: buildingId,
        name: titleCase(normalizeStreet(street)),
        slug,
        type: BUILDING_LABEL[type],
        status: 'COMPLETED',
        yearBuilt: lot?.yearBuilt ?? yearBuilt,
        floorCount: lot?.floors ?? null,
        unitCount: lot?.residentialUnits ?? (Number(row.residential_units) > 0 ? Math.round(Number(row.residential_units)) : null),
        address: { street: titleCase(normalizeStreet(street)), unit: null, city: 'New York', state: 'NY', zipCode: row.zip_code || null },
        geoCenter: position,
        area: { id: areaId, name: areaName.get(areaId) ?? 'Manhattan' },
        amenities: { list: elevator ? ['ELEVATOR'] : [], doormanTypes: [], parkingTypes: [], storageTypes: [] },
        policies: { list: [], petPolicy: null },
        additionalDetails: null,
        nycData: lot
          ? {
              communityDistrict: lot.communityDistrict,
              councilDistrict: lot.councilDistrict,
              policePrecinct: lot.policePrecinct,
              buildingClass: lot.buildingClass,
              buildingClassDescription: buildingClassDescription(lot.buildingClass),
              hasAbatements: null,
              hurricaneEvacuationZone: null,
            }
          : null,
        photos: [],
      };
      buildings.set(buildingId, building);
    }
    const id = String(SALE_ID_BASE + index);
    const candidateUrl = unit ? `/building/${building.slug}/${slugify(unit)}` : null;
    const urlPath = candidateUrl && !usedUrls.has(candidateUrl) ? candidateUrl : `/sale/${id}`;
    usedUrls.add(urlPath);
    const sqft = Number(row.residential_units) === 1 && Number(row.gross_square_feet) > 0 ? Number(row.gross_square_feet) : 0;
    listings.push({
      kind: 'sale',
      areaId,
      buildingId,
      node: {
        id,
        areaId,
        areaName: areaName.get(areaId) ?? 'Manhattan',
        bedroomCount: null,
        fullBathroomCount: null,
        halfBathroomCount: null,
        buildingType: type,
        geoPoint: position,
        leadMedia: null,
        price: Math.round(Number(row.sale_price)),
        netEffectivePrice: null,
        monthsFree: null,
        noFee: null,
        furnished: null,
        availableAt: null,
        livingAreaSize: sqft,
        sourceGroupLabel: null,
        status: 'ACTIVE',
        street,
        unit,
        zipCode: row.zip_code || null,
        state: 'NY',
        urlPath,
        tier: null,
        hasTour3d: null,
        hasVideos: null,
        upcomingOpenHouse: null,
        saleType: yearBuilt !== null && yearBuilt >= 2020 ? 'SPONSOR_UNIT' : 'RESALE',
        monthlyTaxes: null,
        monthlyMaintenance: null,
        monthlyCommonCharges: null,
        listedAt: new Date(Date.parse(`${row.sale_date}T00:00:00Z`) + shift).toISOString(),
        amenities: elevator ? ['ELEVATOR'] : [],
        petsAllowed: null,
        yearBuilt,
        buildingId,
      },
    });
  });
  return { listings, buildings: [...buildings.values()] };
}


