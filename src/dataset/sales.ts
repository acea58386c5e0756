import { slugify } from '../domain/area.js';
import type { GeoPoint } from '../wire/common.js';
import type { SiteListing, LocalBuilding } from '../upstream/local/site-data.js';
import { BOROUGH_NAME_BY_UPSTREAM_ID, type SiteAreaIndex } from './areas.js';
import { undatedListedAt } from './listing-dates.js';
import { listingNode } from './listing-node.js';
import type { BoroughLand } from './placement.js';
import { readCsv } from '../lib/csv.js';
import { sharedDataFile } from './shared-data.js';

/** Listing ids are 8,000,000 + the row's index in the file (clear of the rentals' 7,000,000 + index). */
export const SALE_LISTING_ID_BASE = 8_000_000;
/** Building ids are 8,000,000,000 + the index of the first row at the building's point. */
export const SALE_BUILDING_ID_BASE = 8_000_000_000;
/** `PRICE` 2,147,483,647 (the 32-bit maximum) is a sentinel, not a price. */
export const PRICE_SENTINEL = 2_147_483_647;
/** The publisher's filled-in means: unknown, not values. */
export const FILLED_BATH = '2.3738608579684373';
export const FILLED_SQFT = '2184.207862';

/** The site's building type of a `TYPE`; null where the row does not say (in contract, land, foreclosure, ...). */
export const SALE_BUILDING_TYPE: Readonly<Record<string, string>> = {
  'Co-op for sale': 'CO_OP',
  'Condo for sale': 'CONDO',
  'House for sale': 'HOUSE',
  'Multi-family home for sale': 'MULTIFAMILY',
  'Townhouse for sale': 'TOWNHOUSE',
};
/** `TYPE`s of listings in contract: not active, so an active search does not find them. */
export const IN_CONTRACT_TYPES: ReadonlySet<string> = new Set(['Pending', 'Contingent']);

const BUILDING_LABEL: Readonly<Record<string, string>> = {
  CO_OP: 'Co-op building',
  CONDO: 'Condo building',
  HOUSE: 'House',
  MULTIFAMILY: 'Multi-family building',
  TOWNHOUSE: 'Townhouse',
};

const COLUMNS = [
  'BROKERTITLE',
  'TYPE',
  'PRICE',
  'BEDS',
  'BATH',
  'PROPERTYSQFT',
  'ADDRESS',
  'STATE',
  'MAIN_ADDRESS',
  'ADMINISTRATIVE_AREA_LEVEL_2',
  'LOCALITY',
  'SUBLOCALITY',
  'STREET_NAME',
  'LONG_NAME',
  'FORMATTED_ADDRESS',
  'LATITUDE',
  'LONGITUDE',
] as const;

/** `ADDRESS` -> street and unit: the unit is what follows the last " Unit " or " Apt ". */
export function splitSaleAddress(address: string): { street: string; unit: string | null } {
  const match = /^(.*\S)\s+(?:Unit|Apt)\s+(\S.*)$/.exec(address);
  return match ? { street: match[1], unit: match[2] } : { street: address, unit: null };
}

/** The brokerage of `BROKERTITLE`: the text after "Brokered by", spaces collapsed; null when empty. */
export function brokerage(title: string): string | null {
  const name = title
    .replace(/^Brokered by\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return name || null;
}

/**
 * The for-sale listings of `ny-house-market/NY-House-Dataset.csv`, exact duplicate rows once, the
 * {@link PRICE_SENTINEL} row dropped, each row on one of the five boroughs' land one sale. Real: asking
 * price, bedrooms (not the land rows' filled 3), bathrooms (whole ones full, a fraction one half bath; not
 * the filled mean), square feet (not the filled mean), brokerage as `sourceGroupLabel`, address and unit,
 * ZIP (from `STATE`), position; `Pending` and `Contingent` rows are IN_CONTRACT, the rest ACTIVE. Derived:
 * building type ({@link SALE_BUILDING_TYPE}), borough (whose land holds the point), area (the deepest of
 * the site's outlines holding it, else the borough), building (one per point), listing date
 * ({@link undatedListedAt}). Unknown: amenities, charges, year built, photos.
 */
export function buildSales(
  sharedDataDir: string,
  areas: SiteAreaIndex,
  land: BoroughLand,
  asOf: Date,
): { listings: SiteListing[]; buildings: LocalBuilding[] } {
  const rows = readCsv(sharedDataFile(sharedDataDir, 'nyHouseSales'), 'utf8', COLUMNS);
  const seen = new Set<string>();
  const listings: SiteListing[] = [];
  const buildings = new Map<string, { building: LocalBuilding; slug: string }>();
  const slugs = new Set<string>();
  const urls = new Set<string>();
  rows.forEach((row, index) => {
    const whole = COLUMNS.map((c) => row[c]).join('\u0000');
    if (seen.has(whole)) return;
    seen.add(whole);
    const price = Number(row.PRICE);
    if (!Number.isFinite(price) || price === PRICE_SENTINEL) return;
    const point: GeoPoint = { latitude: Number(row.LATITUDE), longitude: Number(row.LONGITUDE) };
    const borough = land.boroughAt(point);
    if (borough === null) return;
    const boroughName = BOROUGH_NAME_BY_UPSTREAM_ID[borough];
    const { street, unit } = splitSaleAddress(row.ADDRESS);
    const zipCode = /(\d{5})$/.exec(row.STATE)?.[1] ?? null;
    const type = SALE_BUILDING_TYPE[row.TYPE] ?? null;
    const key = `${point.latitude},${point.longitude}`;
    let entry = buildings.get(key);
    if (!entry) {
      entry = saleBuilding({ index, street, type, borough, zipCode, point }, areas, slugs);
      buildings.set(key, entry);
    }
    const { building, slug } = entry;
    const id = SALE_LISTING_ID_BASE + index;
    const unitUrl = unit ? `/building/${slug}/${slugify(unit)}` : null;
    const urlPath = unitUrl && !urls.has(unitUrl) ? unitUrl : `/building/${slug}/sale/${id}`;
    urls.add(urlPath);
    const bath = row.BATH === FILLED_BATH ? null : Number(row.BATH);
    const sqft = row.PROPERTYSQFT === FILLED_SQFT ? 0 : Number(row.PROPERTYSQFT);
    listings.push({
      kind: 'sale',
      areaId: building.areaId,
      buildingId: building.id,
      node: listingNode({
        id: String(id),
        areaName: areas.get(building.areaId)?.name ?? boroughName,
        bedroomCount: row.TYPE === 'Land for sale' ? null : Math.floor(Number(row.BEDS)),
        fullBathroomCount: bath === null ? null : Math.floor(bath),
        halfBathroomCount: bath === null ? null : bath % 1 > 0 ? 1 : 0,
        buildingType: type,
        geoPoint: point,
        price: Math.round(price),
        livingAreaSize: sqft > 0 ? sqft : 0,
        sourceGroupLabel: brokerage(row.BROKERTITLE),
        status: IN_CONTRACT_TYPES.has(row.TYPE) ? 'IN_CONTRACT' : 'ACTIVE',
        street,
        unit,
        zipCode,
        urlPath,
        listedAt: undatedListedAt(id, asOf),
        monthlyMaintenance: null,
        monthlyTaxes: null,
      }),
    });
  });
  return { listings, buildings: [...buildings.values()].map((e) => e.building) };
}

/**
 * The building of a sale's position, the first time a row is at it: its id from the row's index, its slug from the
 * street and borough (made unique with -2, -3, ... against `slugs`, which it joins), its area the deepest holding it.
 */
function saleBuilding(
  sale: { index: number; street: string; type: string | null; borough: number; zipCode: string | null; point: GeoPoint },
  areas: SiteAreaIndex,
  slugs: Set<string>,
): { building: LocalBuilding; slug: string } {
  const { index, street, type, borough, zipCode, point } = sale;
  const boroughName = BOROUGH_NAME_BY_UPSTREAM_ID[borough];
  const area = areas.deepestContaining(borough, point);
  let slug = `${slugify(street)}-${slugify(boroughName)}`;
  for (let n = 2; slugs.has(slug); n++) slug = `${slugify(street)}-${slugify(boroughName)}-${n}`;
  slugs.add(slug);
  return {
    slug,
    building: {
      id: String(SALE_BUILDING_ID_BASE + index),
      name: street,
      type: type ? BUILDING_LABEL[type] : null,
      status: null,
      yearBuilt: null,
      unitCount: null,
      address: { street, city: borough === 100 ? 'New York' : boroughName, state: 'NY', zipCode },
      areaId: area?.numericId ?? borough,
      policies: { list: [], petPolicy: null },
    },
  };
}
