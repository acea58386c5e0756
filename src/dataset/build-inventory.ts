import { join } from 'node:path';
import type { GeoPoint } from '../domain/listing.js';
import { buildUpstreamAreas } from './areas.js';
import { areaPoints } from './geo.js';
import type { Inventory } from '../upstream/local/inventory.js';
import { loadPlutoIndex } from './pluto.js';
import { readJson } from './read.js';
import { buildRentals } from './rentals.js';
import { buildSales } from './sales.js';

/** Midnight UTC of the day holding `date`. */
function utcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
}

interface LabelPoints {
  features: { properties: { name: string }; geometry: { coordinates: [number, number] } }[];
}

/**
 * Builds the local upstream's inventory from the real data under `sharedDataDir`, dated so the newest
 * record falls on the UTC day of `now`.
 * @throws Error when a data file is missing or malformed.
 */
export function buildInventory(sharedDataDir: string, now: Date = new Date()): Inventory {
  const asOf = utcDay(now);
  const areas = buildUpstreamAreas(sharedDataDir);
  const labels = readJson<LabelPoints>(join(sharedDataDir, 'neighborhood-points', 'nyc-neighborhoods.geojson'));
  const points = areaPoints(
    areas,
    labels.features.map((f) => ({
      name: f.properties.name,
      point: { latitude: f.geometry.coordinates[1], longitude: f.geometry.coordinates[0] } satisfies GeoPoint,
    })),
  );
  const rentals = buildRentals(sharedDataDir, areas, points, asOf);
  const sales = buildSales(sharedDataDir, areas, points, loadPlutoIndex(sharedDataDir), asOf);
  return { asOf, areas, listings: [...rentals.listings, ...sales.listings], buildings: [...rentals.buildings, ...sales.buildings] };
}
