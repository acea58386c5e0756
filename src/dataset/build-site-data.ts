import type { SiteData } from '../upstream/local/site-data.js';
import { loadSiteAreas, SiteAreaIndex } from './areas.js';
import { BoroughLand } from './placement.js';
import { checkSharedData } from './shared-data.js';
import { buildRentHopRentals } from './renthop-rentals.js';
import { buildSales } from './sales.js';
import { buildStreetEasyRentals } from './streeteasy-rentals.js';

/** Midnight UTC of the day holding `date`. */
function utcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

/**
 * Builds the local upstream's site data from the real data under `sharedDataDir` as of the UTC day of
 * `now`: the site's own area list; the StreetEasy 2016 rentals (placed inside their areas' real outlines
 * and their borough's land), the RentHop 2016 rentals and the NY-House for-sale listings (at their real
 * positions). Rules in docs/data.md.
 * @throws Error naming `SHARED_DATA_DIR` when a data file is missing ({@link checkSharedData}), or the file when one is malformed.
 */
export function buildSiteData(sharedDataDir: string, now: Date = new Date()): SiteData {
  checkSharedData(sharedDataDir);
  const asOf = utcDay(now);
  const siteAreas = loadSiteAreas(sharedDataDir);
  const areas = new SiteAreaIndex(siteAreas);
  const land = new BoroughLand(sharedDataDir);
  const parts = [
    buildStreetEasyRentals(sharedDataDir, areas, land, asOf),
    buildRentHopRentals(sharedDataDir, areas, land, asOf),
    buildSales(sharedDataDir, areas, land, asOf),
  ];
  return { asOf, areas: siteAreas, listings: parts.flatMap((p) => p.listings), buildings: parts.flatMap((p) => p.buildings) };
}
