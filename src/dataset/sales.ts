import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { slugify } from '../domain/area.js';
import type { InventoryListing, LocalBuilding } from '../upstream/local/inventory.js';
import { normalizeStreet, titleCase } from './address.js';
import type { SiteAreaIndex } from './areas.js';
import { DOF_NEIGHBORHOOD_AREA } from './dof-neighborhoods.js';
import type { BoroughLand } from './placement.js';
import type { PlutoLot } from './pluto.js';
import { readCsv } from './read.js';

const MANHATTAN = 100;

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
 * class, year built (the sale row's; the building's from PLUTO first), gross square feet of one-unit
 * rows. Position: the PLUTO lot's when it lies on Manhattan's land, else {@link BoroughLand.place}
 * inside the DOF neighbourhood's area (one point per building). Area: the deepest of the site's areas
 * whose real outline holds that position, else the DOF neighbourhood's. Derived: listing date (sale
 * date shifted so the newest falls on `asOf`).
 */
export function buildSales(
  sharedDataDir: string,
  areas: SiteAreaIndex,
  land: BoroughLand,
  pluto: Map<string, PlutoLot>,
  asOf: Date,
): { listings: InventoryListing[]; buildings: LocalBuilding[] } {
  const rows = readCsv(join(sharedDataDir, 'rolling-sales', 'manhattan-2022-2023.csv'));
  const newest = Math.max(...rows.map((r) => Date.parse(`${r.sale_date}T00:00:00Z`)));
  const shift = asOf.getTime() - newest;

  const listings: InventoryListing[] = [];
  const buildings = new Map<string, { building: LocalBuilding; slug: string; position: { latitude: number; longitude: number } }>();
  const usedUrls = new Set<string>();
  rows.forEach((row, index) => {
    if (!isResidentialSale(row)) return;
    const dofArea = DOF_NEIGHBORHOOD_AREA[row.neighborhood] ?? areas.find(MANHATTAN, row.neighborhood)?.numericId ?? MANHATTAN;
    const street = row.address.split(',')[0].trim();
    const unit = (row.apartment_number || row.address.split(',')[1] || '').trim() || null;
    const key = `${normalizeStreet(street)}|${row.zip_code}`;
    const lot = pluto.get(key);
    const buildingId = buildingIdFor(lot, key);
    const type = saleBuildingType(row.building_class_category, row.building_class_at_present);
    const yearBuilt = Number(row.year_built) > 0 ? Math.round(Number(row.year_built)) : null;
    const elevator = row.building_class_category.includes('ELEVATOR');
    let entry = buildings.get(buildingId);
    if (!entry) {
      const position =
        lot?.position && land.contains(MANHATTAN, lot.position) ? lot.position : land.place(`sale-building:${buildingId}`, MANHATTAN, areas.outline(dofArea));
      const areaId = areas.deepestContaining(MANHATTAN, position)?.numericId ?? dofArea;
      entry = {
        slug: `${slugify(normalizeStreet(street))}-manhattan`,
        position,
        building: {
          id: buildingId,
          name: titleCase(normalizeStreet(street)),
          type: BUILDING_LABEL[type],
          status: 'COMPLETED',
          yearBuilt: lot?.yearBuilt ?? yearBuilt,
          unitCount: lot?.residentialUnits ?? (Number(row.residential_units) > 0 ? Math.round(Number(row.residential_units)) : null),
          address: { street: titleCase(normalizeStreet(street)), city: 'New York', state: 'NY', zipCode: row.zip_code || null },
          areaId,
          policies: { list: [], petPolicy: null },
        },
      };
      buildings.set(buildingId, entry);
    }
    const { building, slug, position } = entry;
    const id = String(SALE_ID_BASE + index);
    const candidateUrl = unit ? `/building/${slug}/${slugify(unit)}` : null;
    const urlPath = candidateUrl && !usedUrls.has(candidateUrl) ? candidateUrl : `/building/${slug}/sale/${id}`;
    usedUrls.add(urlPath);
    const sqft = Number(row.residential_units) === 1 && Number(row.gross_square_feet) > 0 ? Number(row.gross_square_feet) : 0;
    listings.push({
      kind: 'sale',
      areaId: building.areaId,
      buildingId,
      node: {
        id,
        areaName: areas.get(building.areaId)?.name ?? 'Manhattan',
        bedroomCount: null,
        fullBathroomCount: null,
        halfBathroomCount: null,
        buildingType: type,
        geoPoint: position,
        leadPhotoKey: null,
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
        listedAt: new Date(Date.parse(`${row.sale_date}T00:00:00Z`) + shift).toISOString(),
        amenities: elevator ? ['ELEVATOR'] : [],
        petsAllowed: null,
        yearBuilt,
        monthlyMaintenance: null,
        monthlyTaxes: null,
      },
    });
  });
  return { listings, buildings: [...buildings.values()].map((e) => e.building) };
}
