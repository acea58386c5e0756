import type { Inventory } from '../upstream/local/inventory.js';
import { loadSiteAreas, SiteAreaIndex } from './areas.js';
import { BoroughLand } from './placement.js';
import { loadPlutoIndex } from './pluto.js';
import { buildRentals } from './rentals.js';
import { buildSales } from './sales.js';

/** Midnight UTC of the day holding `date`. */
function utcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

/**
 * Builds the local upstream's inventory from the real data under `sharedDataDir`, dated so the newest
 * record falls on the UTC day of `now`: the site's own area list, and listings placed inside the real
 * outlines of their areas and on their borough's land (docs/data.md).
 * @throws Error when a data file is missing or malformed.
 */
export function buildInventory(sharedDataDir: string, now: Date = new Date()): Inventory {
  const asOf = utcDay(now);
  const siteAreas = loadSiteAreas(sharedDataDir);
  const areas = new SiteAreaIndex(siteAreas);
  const land = new BoroughLand(sharedDataDir);
  const rentals = buildRentals(sharedDataDir, areas, land, asOf);
  const sales = buildSales(sharedDataDir, areas, land, loadPlutoIndex(sharedDataDir), asOf);
  return { asOf, areas: siteAreas, listings: [...rentals.listings, ...sales.listings], buildings: [...rentals.buildings, ...sales.buildings] };
}
