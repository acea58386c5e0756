import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../../src/domain/city-records.js';
import { inRings } from '../helpers/geometry.js';
import { get } from '../helpers/http.js';
import { SHARED_DATA } from '../helpers/paths.js';
import { useTestRuntime } from '../helpers/runtime.js';

type Rings = number[][][];

/** The value of the first feature whose (Multi)Polygon holds the point, read here from the shared file. */
function polygonLookup(file: string, property: string): (lon: number, lat: number) => string | undefined {
  const features = (JSON.parse(gunzipSync(readFileSync(join(SHARED_DATA, file))).toString('utf8')) as {
    features: { properties: Record<string, string>; geometry: { type: string; coordinates: Rings | Rings[] } }[];
  }).features.map((f) => ({ value: f.properties[property], parts: f.geometry.type === 'Polygon' ? [f.geometry.coordinates as Rings] : (f.geometry.coordinates as Rings[]) }));
  return (lon, lat) => features.find((f) => f.parts.some((rings) => inRings(rings, lon, lat)))?.value;
}

describe("buildings' tax-lot facts (nycData) from NYC Open Data", () => {
  const t = useTestRuntime('business');
  let pluto: Map<string, Record<string, string>>;
  let council: (lon: number, lat: number) => string | undefined;
  let zone: (lon: number, lat: number) => string | undefined;
  beforeAll(() => {
    const rows = parse(gunzipSync(readFileSync(join(SHARED_DATA, 'pluto/pluto-16v2-manhattan.csv.gz'))).toString('latin1'), { columns: true }) as Record<string, string>[];
    // The address key is the mirror's own rule (unit-tested in test/unit/city-records.test.ts); the first lot by BBL at an address, as the mirror takes.
    pluto = new Map();
    for (const r of rows.sort((a, b) => String(Math.round(Number(a.BBL))).localeCompare(String(Math.round(Number(b.BBL)))))) {
      const k = `${addressKey(r.Address)}|${r.ZipCode}`;
      if (!pluto.has(k)) pluto.set(k, r);
    }
    council = polygonLookup('council-districts/nycc-2023-lines.geojson.gz', 'coun_dist');
    zone = polygonLookup('hurricane-zones/hurricane-zones-2021.geojson.gz', 'zone');
  });

  it("a Manhattan building's nycData and floor count equal its PLUTO row; its council district and evacuation zone are those holding its position", async () => {
    const ids = (await t.rt.store.db.selectFrom('buildings').select(['id', 'data']).execute())
      .map((r) => ({ id: r.id, b: JSON.parse(r.data) }))
      .filter(({ b }) => b.address.zipCode && /^10[0-2]\d\d$/.test(b.address.zipCode) && b.address.street);
    let matched = 0;
    for (const { id, b } of ids.slice(0, 300)) {
      const res = await get(t.rt.app, `/v1/building/${id}`, t.key);
      expect(res.status).toBe(200);
      const lot = pluto.get(`${addressKey(b.address.street)}|${b.address.zipCode}`);
      const point = res.body.data.geoCenter;
      const zoneAt = point ? zone(point.longitude, point.latitude) : undefined;
      const expectedCouncil = point ? council(point.longitude, point.latitude) : undefined;
      if (!lot && !point) {
        expect(res.body.data.nycData).toBeNull();
        continue;
      }
      if (lot) matched++;
      expect(res.body.data.nycData, id).toEqual({
        communityDistrict: lot ? Number(lot.CD) : null,
        councilDistrict: expectedCouncil ? Number(expectedCouncil) : null,
        policePrecinct: lot ? Number(lot.PolicePrct) : null,
        buildingClass: lot ? lot.BldgClass : null,
        buildingClassDescription: lot ? expect.any(String) : null,
        hasAbatements: null,
        hurricaneEvacuationZone: zoneAt && zoneAt !== '0' ? zoneAt : null,
      });
      if (lot && b.floorCount === null) expect(res.body.data.floorCount).toBe(Number(lot.NumFloors) > 0 ? Math.ceil(Number(lot.NumFloors)) : null);
    }
    // Most Manhattan addresses the listing site gives are found in PLUTO.
    expect(matched).toBeGreaterThan(100);
  });

  it("a building's recorded sales join its sale inventory's historical figures, under UNKNOWN bedrooms", async () => {
    const sale = (await get(t.rt.app, '/v1/recorded-sales?areas=200&noConsideration=false&perPage=500', t.key)).body.data.find((s: any) => s.buildingId);
    const id = sale.buildingId;
    const sales = (await get(t.rt.app, `/v1/recorded-sales?buildingId=${id}&noConsideration=false&perPage=500`, t.key)).body.data.map((s: any) => s.salePrice);
    const listings = await t.rt.store.db.selectFrom('listings').select(['price', 'bedroom_count', 'status']).where('building_id', '=', id).where('kind', '=', 'sale').execute();
    const unknown = listings.filter((l) => l.bedroom_count === null).map((l) => Number(l.price));
    const prices = [...unknown, ...sales];
    const res = await get(t.rt.app, `/v1/building/${id}`, t.key);
    const row = res.body.data.saleInventory.byBedroom.find((r: any) => r.bedrooms === 'UNKNOWN');
    const active = listings.filter((l) => l.bedroom_count === null && l.status === 'ACTIVE').map((l) => Number(l.price));
    expect(row).toEqual({
      bedrooms: 'UNKNOWN',
      availableCount: active.length,
      minPrice: active.length ? Math.min(...active) : null,
      maxPrice: active.length ? Math.max(...active) : null,
      historicalCount: prices.length,
      historicalMinPrice: Math.min(...prices),
      historicalMaxPrice: Math.max(...prices),
    });
    const known = res.body.data.saleInventory.byBedroom.filter((r: any) => r.bedrooms !== 'UNKNOWN');
    expect(known.reduce((n: number, r: any) => n + r.historicalCount, 0)).toBe(listings.length - unknown.length);
  });

  it('a building outside Manhattan gets its council district and evacuation zone from its position, and no PLUTO facts', async () => {
    const rows = (await t.rt.store.db.selectFrom('buildings').select(['id', 'data']).execute()).map((r) => ({ id: r.id, b: JSON.parse(r.data) }));
    const brooklyn = rows.filter(({ b }) => b.geoCenter && b.address.zipCode?.startsWith('112')).slice(0, 20);
    expect(brooklyn.length).toBe(20);
    for (const { id, b } of brooklyn) {
      const res = await get(t.rt.app, `/v1/building/${id}`, t.key);
      const { longitude, latitude } = b.geoCenter;
      const z = zone(longitude, latitude);
      expect(res.body.data.nycData).toEqual({
        communityDistrict: null,
        councilDistrict: council(longitude, latitude) ? Number(council(longitude, latitude)) : null,
        policePrecinct: null,
        buildingClass: null,
        buildingClassDescription: null,
        hasAbatements: null,
        hurricaneEvacuationZone: z && z !== '0' ? z : null,
      });
    }
  });
});
