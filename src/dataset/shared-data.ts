import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The files of the shared data folder (`SHARED_DATA_DIR`, by default `../shared/data`) the local upstream
 * builds its site data from, relative to that folder. Provenance: that folder's README and docs/data.md.
 */
export const SHARED_DATA_FILES = {
  siteAreas: 'streeteasy-areas/areas.json',
  boroughLand: 'nta/nta-2010.geojson',
  streetEasyRentals: 'streeteasy-2016/rentals.csv',
  rentHopRentals: 'renthop-2016/rent.csv',
  nyHouseSales: 'ny-house-market/NY-House-Dataset.csv',
} as const;

/** The absolute path of one shared data file. */
export function sharedDataFile(sharedDataDir: string, file: keyof typeof SHARED_DATA_FILES): string {
  return join(sharedDataDir, SHARED_DATA_FILES[file]);
}

/**
 * Checks that `sharedDataDir` holds every file of {@link SHARED_DATA_FILES}, before any is read.
 * @throws Error, in one line naming `SHARED_DATA_DIR`, the folder and the files it lacks.
 */
export function checkSharedData(sharedDataDir: string): void {
  const missing = Object.values(SHARED_DATA_FILES).filter((file) => !existsSync(join(sharedDataDir, file)));
  if (!missing.length) return;
  throw new Error(
    `SHARED_DATA_DIR (${resolve(sharedDataDir)}) must hold the real data the local upstream serves ` +
      `(${Object.values(SHARED_DATA_FILES).join(', ')}); missing: ${missing.join(', ')}. ` +
      'See "Where the data comes from" in README.md, or set UPSTREAM_URL to use another upstream.',
  );
}
