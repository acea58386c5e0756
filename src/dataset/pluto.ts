import { join } from 'node:path';
import type { GeoPoint } from '../wire/common.js';
import { normalizeStreet } from './address.js';
import { statePlaneToWgs84 } from './geo.js';
import { readCsv } from './read.js';

/** The PLUTO 16v2 facts the project uses about one Manhattan tax lot. */
export interface PlutoLot {
  bbl: string;
  address: string;
  zipCode: string;
  communityDistrict: number | null;
  councilDistrict: number | null;
  policePrecinct: number | null;
  buildingClass: string | null;
  floors: number | null;
  residentialUnits: number | null;
  yearBuilt: number | null;
  position: GeoPoint | null;
}

const positive = (value: string | undefined): number | null => {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : null;
};

/**
 * PLUTO lots keyed by `normalizeStreet(address)|zip`, from `pluto/pluto-16v2-manhattan.csv.gz`
 * (Latin-1). Positions are XCoord/YCoord converted from EPSG:2263 to WGS84. The first lot of a key wins.
 */
export function loadPlutoIndex(sharedDataDir: string): Map<string, PlutoLot> {
  const index = new Map<string, PlutoLot>();
  const columns = ['Address', 'ZipCode', 'BBL', 'CD', 'Council', 'PolicePrct', 'BldgClass', 'NumFloors', 'UnitsRes', 'YearBuilt', 'XCoord', 'YCoord'] as const;
  for (const row of readCsv(join(sharedDataDir, 'pluto', 'pluto-16v2-manhattan.csv.gz'), 'latin1', columns)) {
    if (!row.Address || !/^\d/.test(row.Address)) continue;
    const key = `${normalizeStreet(row.Address)}|${row.ZipCode}`;
    if (index.has(key)) continue;
    const bbl = String(Math.round(Number(row.BBL)));
    index.set(key, {
      bbl,
      address: row.Address,
      zipCode: row.ZipCode,
      communityDistrict: positive(row.CD),
      councilDistrict: positive(row.Council),
      policePrecinct: positive(row.PolicePrct),
      buildingClass: row.BldgClass || null,
      floors: positive(row.NumFloors) === null ? null : Math.ceil(Number(row.NumFloors)),
      residentialUnits: positive(row.UnitsRes),
      yearBuilt: positive(row.YearBuilt),
      position: statePlaneToWgs84(Number(row.XCoord), Number(row.YCoord)),
    });
  }
  return index;
}
