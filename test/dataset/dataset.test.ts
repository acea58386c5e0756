import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodePolyline, inRings } from '../helpers/geometry.js';
import { SHARED_DATA } from '../helpers/paths.js';
import { loadSiteData } from '../helpers/runtime.js';
import { allSaleRows, areaAt, rentalRows, siteAreas, upstreamParents } from '../helpers/source-rows.js';

const siteData = loadSiteData();

describe('dataset builders over the real data', () => {
  it('every StreetEasy row, every RentHop row on land at a plausible rent, and every NY-House row once is one listing', () => {
    const rentals = siteData.listings.filter((l) => l.kind === 'rental');
    const sales = siteData.listings.filter((l) => l.kind === 'sale');
    expect(rentals.map((l) => l.node.id).sort()).toEqual(
      rentalRows()
        .map((r) => r.rental_id)
        .sort(),
    );
    expect(sales.map((l) => l.node.id).sort()).toEqual(
      allSaleRows()
        .map((r) => r.id)
        .sort(),
    );
    expect(new Set(siteData.listings.map((l) => l.node.id)).size).toBe(siteData.listings.length);
    expect(new Set(siteData.listings.map((l) => l.node.urlPath)).size).toBe(siteData.listings.length);
    const inContract = new Set(
      allSaleRows()
        .filter((r) => r.inContract)
        .map((r) => r.id),
    );
    expect(
      siteData.listings
        .filter((l) => l.node.status !== 'ACTIVE')
        .map((l) => l.node.id)
        .sort(),
    ).toEqual([...inContract].sort());
    expect(sales.filter((l) => inContract.has(l.node.id)).every((l) => l.node.status === 'IN_CONTRACT')).toBe(true);
  });

  it("without the RentHop file, the site data is the whole city's less its RentHop rentals and their buildings, nothing else changed", () => {
    const without = loadSiteData(true);
    const renthop = new Set(
      rentalRows()
        .filter((r) => r.source === 'renthop')
        .map((r) => r.rental_id),
    );
    expect(renthop.size).toBeGreaterThan(40_000);
    const kept = siteData.listings.filter((l) => !(l.kind === 'rental' && renthop.has(l.node.id)));
    expect(without.listings).toEqual(kept);
    const buildings = new Set(kept.map((l) => l.buildingId));
    expect(without.buildings).toEqual(siteData.buildings.filter((b) => buildings.has(b.id)));
    expect(without.areas).toEqual(siteData.areas);
  });

  it("RentHop and NY-House listings keep their source row's position, and lie in the deepest area whose outline holds it", () => {
    const byId = new Map(siteData.listings.map((l) => [l.node.id, l]));
    for (const r of rentalRows().filter((r) => r.source === 'renthop')) {
      const l = byId.get(r.rental_id)!;
      expect(l.node.geoPoint).toEqual({ latitude: Number(r.latitude), longitude: Number(r.longitude) });
      expect(l.areaId).toBe(Number(r.area_id));
    }
    for (const r of allSaleRows()) {
      const l = byId.get(r.id)!;
      expect(l.node.geoPoint).toEqual({ latitude: r.latitude, longitude: r.longitude });
      expect(l.areaId).toBe(areaAt(r.borough, r.longitude, r.latitude));
    }
  });

  it("the publisher's filled-in means are unknown, never a number; the brokerage is the source group", () => {
    const byId = new Map(siteData.listings.map((l) => [l.node.id, l.node]));
    for (const r of allSaleRows()) {
      const n = byId.get(r.id)!;
      expect(n.bedroomCount).toBe(r.bedrooms);
      expect(n.fullBathroomCount).toBe(r.fullBaths);
      expect(n.livingAreaSize).toBe(r.sqft ?? 0);
      expect(n.sourceGroupLabel).toBe(
        r.broker
          .replace(/^Brokered by\s*/, '')
          .replace(/\s+/g, ' ')
          .trim() || null,
      );
    }
    const nodes = [...byId.values()];
    expect(nodes.filter((n) => n.fullBathroomCount === null).length).toBe(allSaleRows().filter((r) => r.fullBaths === null).length);
    expect(allSaleRows().filter((r) => r.fullBaths === null).length).toBeGreaterThan(200);
    expect(nodes.some((n) => n.livingAreaSize === 2184.207862)).toBe(false);
  });

  it('listings at exactly the same point share one building, and no building spans two points', () => {
    const points = new Map<string, Set<string>>();
    const buildings = new Map<string, Set<string>>();
    for (const l of siteData.listings.filter((l) => l.node.id.length === 7 && Number(l.node.id) >= 7_000_000)) {
      const point = `${l.kind}:${l.node.geoPoint!.latitude},${l.node.geoPoint!.longitude}`;
      points.set(point, (points.get(point) ?? new Set()).add(l.buildingId!));
      buildings.set(l.buildingId!, (buildings.get(l.buildingId!) ?? new Set()).add(point));
    }
    expect([...points.values()].every((b) => b.size === 1)).toBe(true);
    expect([...buildings.values()].every((p) => p.size === 1)).toBe(true);
  });

  it("areas are the site's own answer, served as captured", () => {
    const real = siteAreas();
    expect(siteData.areas.length).toBe(346);
    expect(siteData.areas.map((a) => a.id)).toEqual(real.map((a) => a.id));
  });

  it("every listing lies inside its borough's NTA polygons", () => {
    const nta = JSON.parse(readFileSync(join(SHARED_DATA, 'nta', 'nta-2010.geojson'), 'utf8')) as {
      features: { properties: { BoroName: string }; geometry: { type: string; coordinates: number[][][] | number[][][][] } }[];
    };
    // Each polygon with its bounding box, tested first: a point lies in the boxes of few of a borough's polygons.
    type Part = { rings: number[][][]; west: number; east: number; south: number; north: number };
    const polygons = new Map<string, Part[]>();
    for (const f of nta.features) {
      const parts = f.geometry.type === 'Polygon' ? [f.geometry.coordinates as number[][][]] : (f.geometry.coordinates as number[][][][]);
      const boxed = parts.map((rings) => {
        const [xs, ys] = [rings[0].map((p) => p[0]), rings[0].map((p) => p[1])];
        return { rings, west: Math.min(...xs), east: Math.max(...xs), south: Math.min(...ys), north: Math.max(...ys) };
      });
      polygons.set(f.properties.BoroName, [...(polygons.get(f.properties.BoroName) ?? []), ...boxed]);
    }
    const inBorough = (borough: string, longitude: number, latitude: number) =>
      polygons
        .get(borough)!
        .some(
          (p) =>
            longitude >= p.west &&
            longitude <= p.east &&
            latitude >= p.south &&
            latitude <= p.north &&
            inRings(p.rings, longitude, latitude),
        );
    const parents = upstreamParents();
    const boroughName: Record<number, string> = { 100: 'Manhattan', 200: 'Bronx', 300: 'Brooklyn', 400: 'Queens', 500: 'Staten Island' };
    const boroughOf = (id: number) => {
      for (let c: number | null | undefined = id; c; c = parents.get(c)) if (boroughName[c]) return boroughName[c];
      return undefined;
    };
    const outside = siteData.listings.filter((l) => {
      const borough = boroughOf(l.areaId)!;
      const { latitude, longitude } = l.node.geoPoint!;
      return !inBorough(borough, longitude, latitude);
    });
    expect(outside.map((l) => l.node.id)).toEqual([]);
  });

  it("StreetEasy rentals sit inside their neighbourhood's real outline, a building on one point (not a neighbourhood on one point)", () => {
    const outlines = new Map(
      siteAreas().map((a) => [a.numericId, (a as unknown as { geometry: { encodedBoundary: string } }).geometry.encodedBoundary]),
    );
    const rentals = siteData.listings.filter(
      (l) => l.kind === 'rental' && Number(l.node.id) < 7_000_000 && ![100, 200, 300, 400, 500].includes(l.areaId),
    );
    const outside = rentals.filter(
      (l) => !inRings([decodePolyline(outlines.get(l.areaId)!)], l.node.geoPoint!.longitude, l.node.geoPoint!.latitude),
    );
    expect(rentals.length).toBeGreaterThan(4900);
    expect(outside.length).toBe(0);
    const perPoint = new Map<string, Set<string>>();
    for (const l of rentals) {
      const key = `${l.node.geoPoint!.latitude},${l.node.geoPoint!.longitude}`;
      perPoint.set(key, (perPoint.get(key) ?? new Set()).add(l.buildingId!));
    }
    expect([...perPoint.values()].every((buildings) => buildings.size === 1)).toBe(true);
  });

  it('names repeat across boroughs: Chelsea rentals of the sample are in Manhattan', () => {
    const parents = upstreamParents();
    const inManhattan = (id: number) => {
      for (let c: number | null | undefined = id; c; c = parents.get(c)) if (c === 100) return true;
      return false;
    };
    const chelsea = siteData.listings.filter((l) => l.kind === 'rental' && l.node.areaName === 'Chelsea');
    expect(chelsea.length).toBeGreaterThan(10);
    expect(chelsea.every((l) => inManhattan(l.areaId))).toBe(true);
  });
});
