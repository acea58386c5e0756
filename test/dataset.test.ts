import { describe, expect, it } from 'vitest';
import { normalizeStreet } from '../src/dataset/address.js';
import { buildUpstreamAreas } from '../src/dataset/areas.js';
import { loadPlutoIndex } from '../src/dataset/pluto.js';
import { SHARED_DATA } from './helpers/paths.js';
import { loadInventory } from './helpers/runtime.js';
import { rentalRows, saleRows } from './helpers/source-rows.js';

const inventory = loadInventory();

describe('dataset builders over the real data', () => {
  it('every rental row and every residential sale becomes one active listing', () => {
    const rentals = inventory.listings.filter((l) => l.kind === 'rental');
    const sales = inventory.listings.filter((l) => l.kind === 'sale');
    expect(rentals.length).toBe(rentalRows().length);
    expect(rentals.length).toBeGreaterThanOrEqual(4900);
    expect(sales.length).toBe(saleRows().length);
    expect(sales.length).toBeGreaterThanOrEqual(10_000);
    expect(new Set(inventory.listings.map((l) => l.node.id)).size).toBe(inventory.listings.length);
    expect(inventory.listings.every((l) => l.node.status === 'ACTIVE')).toBe(true);
    expect(new Set(inventory.listings.map((l) => l.node.urlPath)).size).toBe(inventory.listings.length);
  });

  it('areas: the NYC rows of regions.json plus Cypress Hills', () => {
    const areas = buildUpstreamAreas(SHARED_DATA);
    expect(areas.length).toBe(322);
    expect(areas.find((a) => a.id === 347)).toEqual({ id: 347, name: 'Cypress Hills', parentId: 300 });
    expect(areas.some((a) => a.name === 'New Jersey' || a.id === 1)).toBe(false);
    expect(areas.find((a) => a.id === 226)?.parentId).toBe(144);
  });

  it('PLUTO positions convert from EPSG:2263 to WGS84 (338 Fifth Avenue: the Empire State Building lot)', () => {
    const lot = loadPlutoIndex(SHARED_DATA).get(`${normalizeStreet('338 FIFTH AVENUE')}|10118`);
    expect(lot).toBeDefined();
    expect(lot!.position!.latitude).toBeCloseTo(40.7484, 2);
    expect(lot!.position!.longitude).toBeCloseTo(-73.9857, 2);
    expect(lot!.communityDistrict).toBe(105);
  });

  it('sales join PLUTO for most buildings, and every listing has a position', () => {
    const sales = inventory.listings.filter((l) => l.kind === 'sale');
    const joined = inventory.buildings.filter((b) => b.nycData);
    expect(joined.length).toBeGreaterThan(1000);
    const withPluto = new Set(joined.map((b) => b.id));
    expect(sales.filter((s) => withPluto.has(s.buildingId!)).length / sales.length).toBeGreaterThan(0.6);
    expect(inventory.listings.every((l) => l.node.geoPoint)).toBe(true);
    for (const b of joined.slice(0, 200)) {
      expect(b.geoCenter!.latitude).toBeGreaterThan(40.68);
      expect(b.geoCenter!.latitude).toBeLessThan(40.89);
    }
  });

  it('the newest sale falls on the build day', () => {
    const newest = Math.max(...inventory.listings.filter((l) => l.kind === 'sale').map((l) => Date.parse(l.node.listedAt!)));
    expect(newest).toBe(inventory.asOf.getTime());
  });
});
