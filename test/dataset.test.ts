import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeStreet } from '../src/dataset/address.js';
import { loadPlutoIndex } from '../src/dataset/pluto.js';
import { decodePolyline, inRings } from './helpers/geometry.js';
import { SHARED_DATA } from './helpers/paths.js';
import { loadInventory } from './helpers/runtime.js';
import { rentalRows, saleRows, siteAreas, upstreamParents } from './helpers/source-rows.js';

const inventory = loadInventory();

describe('dataset builders over the real data', () => {
  it('every rental row and every residential sale becomes one active listing', () => {
    const rentals = inventory.listings.filter((l) => l.kind === 'rental');
    const sales = inventory.listings.filter((l) => l.kind === 'sale');
    expect(rentals.length).toBe(rentalRows().length);
    expect(sales.length).toBe(saleRows().length);
    expect(new Set(inventory.listings.map((l) => l.node.id)).size).toBe(inventory.listings.length);
    expect(inventory.listings.every((l) => l.node.status === 'ACTIVE')).toBe(true);
    expect(new Set(inventory.listings.map((l) => l.node.urlPath)).size).toBe(inventory.listings.length);
  });

  it('areas are the site\'s own answer, served as captured', () => {
    const real = siteAreas();
    expect(inventory.areas.length).toBe(346);
    expect(inventory.areas.map((a) => a.id)).toEqual(real.map((a) => a.id));
  });

  it('PLUTO positions convert from EPSG:2263 to WGS84 (338 Fifth Avenue: the Empire State Building lot)', () => {
    const lot = loadPlutoIndex(SHARED_DATA).get(`${normalizeStreet('338 FIFTH AVENUE')}|10118`);
    expect(lot).toBeDefined();
    expect(lot!.position!.latitude).toBeCloseTo(40.7484, 2);
    expect(lot!.position!.longitude).toBeCloseTo(-73.9857, 2);
  });

  it('every listing lies inside its borough\'s NTA polygons', () => {
    const nta = JSON.parse(readFileSync(join(SHARED_DATA, 'nta', 'nta-2010.geojson'), 'utf8')) as {
      features: { properties: { BoroName: string }; geometry: { type: string; coordinates: number[][][] | number[][][][] } }[];
    };
    const polygons = new Map<string, number[][][][]>();
    for (const f of nta.features) {
      const parts = f.geometry.type === 'Polygon' ? [f.geometry.coordinates as number[][][]] : (f.geometry.coordinates as number[][][][]);
      polygons.set(f.properties.BoroName, [...(polygons.get(f.properties.BoroName) ?? []), ...parts]);
    }
    const parents = upstreamParents();
    const boroughName: Record<number, string> = { 100: 'Manhattan', 200: 'Bronx', 300: 'Brooklyn', 400: 'Queens', 500: 'Staten Island' };
    const boroughOf = (id: number) => {
      for (let c: number | null | undefined = id; c; c = parents.get(c)) if (boroughName[c]) return boroughName[c];
      return undefined;
    };
    const outside = inventory.listings.filter((l) => {
      const borough = boroughOf(l.areaId)!;
      const { latitude, longitude } = l.node.geoPoint!;
      return !polygons.get(borough)!.some((rings) => inRings(rings, longitude, latitude));
    });
    expect(outside.map((l) => l.node.id)).toEqual([]);
  });

  it('rentals sit inside their neighbourhood\'s real outline, a building on one point (not a neighbourhood on one point)', () => {
    const outlines = new Map(siteAreas().map((a) => [a.numericId, (a as unknown as { geometry: { encodedBoundary: string } }).geometry.encodedBoundary]));
    const rentals = inventory.listings.filter((l) => l.kind === 'rental' && ![100, 200, 300, 400, 500].includes(l.areaId));
    const outside = rentals.filter((l) => !inRings([decodePolyline(outlines.get(l.areaId)!)], l.node.geoPoint!.longitude, l.node.geoPoint!.latitude));
    expect(rentals.length).toBeGreaterThan(4900);
    expect(outside.length).toBe(0);
    const perPoint = new Map<string, Set<string>>();
    for (const l of rentals) {
      const key = `${l.node.geoPoint!.latitude},${l.node.geoPoint!.longitude}`;
      perPoint.set(key, (perPoint.get(key) ?? new Set()).add(l.buildingId!));
    }
    expect([...perPoint.values()].every((buildings) => buildings.size === 1)).toBe(true);
  });

  it('names repeat across boroughs: Chelsea rentals are in Manhattan, and sale 1007915 on East 37th Street is in Murray Hill, Manhattan', () => {
    const parents = upstreamParents();
    const inManhattan = (id: number) => {
      for (let c: number | null | undefined = id; c; c = parents.get(c)) if (c === 100) return true;
      return false;
    };
    const chelsea = inventory.listings.filter((l) => l.kind === 'rental' && l.node.areaName === 'Chelsea');
    expect(chelsea.length).toBeGreaterThan(10);
    expect(chelsea.every((l) => inManhattan(l.areaId))).toBe(true);
    const sale = inventory.listings.find((l) => l.node.id === '1007915')!;
    expect(sale.node.street).toContain('37TH');
    expect(inManhattan(sale.areaId)).toBe(true);
    expect(sale.node.geoPoint!.latitude).toBeGreaterThan(40.74);
    expect(sale.node.geoPoint!.latitude).toBeLessThan(40.76);
  });

  it('a sale lies in the area whose real outline holds its position', () => {
    const outlines = new Map(siteAreas().map((a) => [a.numericId, decodePolyline((a as unknown as { geometry: { encodedBoundary: string } }).geometry.encodedBoundary)]));
    const sales = inventory.listings.filter((l) => l.kind === 'sale').slice(0, 2000);
    const wrong = sales.filter((l) => l.areaId !== 100 && !inRings([outlines.get(l.areaId)!], l.node.geoPoint!.longitude, l.node.geoPoint!.latitude));
    expect(wrong.length).toBe(0);
  });

  it('the newest sale falls on the build day', () => {
    const newest = Math.max(...inventory.listings.filter((l) => l.kind === 'sale').map((l) => Date.parse(l.node.listedAt!)));
    expect(newest).toBe(inventory.asOf.getTime());
  });
});
