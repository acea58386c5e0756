import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../../src/domain/city-records.js';
import { communityDistrictOf, numberOf, polygonLookup } from '../helpers/city-polygons.js';
import { get } from '../helpers/http.js';
import { SHARED_DATA } from '../helpers/paths.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

describe("buildings' tax-lot facts (nycData) from NYC Open Data", () => {
  const t = useSharedTestRuntime('business');
  let pluto: Map<string, Record<string, string>>;
  let council: (lon: number, lat: number) => string | undefined;
  let zone: (lon: number, lat: number) => string | undefined;
  let community: (lon: number, lat: number) => string | undefined;
  let precinct: (lon: number, lat: number) => string | undefined;
  let school: (lon: number, lat: number) => string | undefined;
  const district = communityDistrictOf;
  const number = numberOf;
  /** What the building's recorded sales say, read here: for each fact, the latest sale that knows it (DOF's 0 is unknown). */
  const soldFacts = async (buildingId: string) => {
    const rows = await t.rt.store.db
      .selectFrom('recorded_sales')
      .select(['id', 'year_built', 'residential_units', 'building_class', 'sale_date'])
      .where('building_id', '=', buildingId)
      .execute();
    // Newest first; sales of one day by id, newest first, as the mirror takes them.
    rows.sort((a, b) => b.sale_date.localeCompare(a.sale_date) || b.id.localeCompare(a.id));
    const first = <T>(pick: (r: (typeof rows)[number]) => T) =>
      rows.map(pick).find((v) => v !== null && v !== undefined && (v as unknown) !== 0) ?? null;
    return {
      yearBuilt: first((r) => r.year_built),
      units: first((r) => r.residential_units),
      buildingClass: first((r) => r.building_class),
      sales: rows.length,
    };
  };
  beforeAll(() => {
    const rows = parse(gunzipSync(readFileSync(join(SHARED_DATA, 'pluto/pluto-16v2-manhattan.csv.gz'))).toString('latin1'), {
      columns: true,
    }) as Record<string, string>[];
    // The address key is the mirror's own rule (unit-tested in test/domain/city-records.test.ts); the first lot by BBL at an address, as the mirror takes.
    pluto = new Map();
    for (const r of rows.sort((a, b) => String(Math.round(Number(a.BBL))).localeCompare(String(Math.round(Number(b.BBL)))))) {
      const k = `${addressKey(r.Address)}|${r.ZipCode}`;
      if (!pluto.has(k)) pluto.set(k, r);
    }
    council = polygonLookup('council-districts/nycc-2023-lines.geojson.gz', 'coun_dist');
    zone = polygonLookup('hurricane-zones/hurricane-zones-2021.geojson.gz', 'zone');
    community = polygonLookup('community-districts/community-districts.geojson.gz', 'boro_cd');
    precinct = polygonLookup('police-precincts/police-precincts.geojson.gz', 'precinct');
    school = polygonLookup('school-districts/school-districts.geojson.gz', 'SchoolDist');
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
      const sold = await soldFacts(id);
      expect(res.body.data.nycData, id).toEqual({
        communityDistrict: lot ? Number(lot.CD) : point ? district(community(point.longitude, point.latitude)) : null,
        councilDistrict: expectedCouncil ? Number(expectedCouncil) : null,
        policePrecinct: lot ? Number(lot.PolicePrct) : point ? number(precinct(point.longitude, point.latitude)) : null,
        schoolDistrict: point ? number(school(point.longitude, point.latitude)) : null,
        buildingClass: lot ? lot.BldgClass : sold.buildingClass,
        buildingClassDescription: lot || sold.buildingClass ? expect.any(String) : null,
        hasAbatements: null,
        hurricaneEvacuationZone: zoneAt && zoneAt !== '0' ? zoneAt : null,
      });
      // The listings site's values win; then PLUTO's lot; then the latest recorded sale that knows them.
      const positive = (v: string | undefined) => (Number(v) > 0 ? Number(v) : null);
      expect(res.body.data.yearBuilt, id).toBe(b.yearBuilt ?? (lot ? positive(lot.YearBuilt) : null) ?? sold.yearBuilt);
      expect(res.body.data.unitCount, id).toBe(b.unitCount ?? (lot ? positive(lot.UnitsRes) : null) ?? sold.units);
      if (lot && b.floorCount === null)
        expect(res.body.data.floorCount).toBe(Number(lot.NumFloors) > 0 ? Math.ceil(Number(lot.NumFloors)) : null);
    }
    // Most Manhattan addresses the listing site gives are found in PLUTO.
    expect(matched).toBeGreaterThan(100);
  });

  it("a building's recorded sales join its sale inventory's historical figures, under UNKNOWN bedrooms", async () => {
    const sale = (await get(t.rt.app, '/v1/recorded-sales?areas=200&noConsideration=false&perPage=500', t.key)).body.data.find(
      (s: any) => s.buildingId,
    );
    const id = sale.buildingId;
    const sales = (await get(t.rt.app, `/v1/recorded-sales?buildingId=${id}&noConsideration=false&perPage=500`, t.key)).body.data.map(
      (s: any) => s.salePrice,
    );
    const listings = await t.rt.store.db
      .selectFrom('listings')
      .select(['price', 'bedroom_count', 'status'])
      .where('building_id', '=', id)
      .where('kind', '=', 'sale')
      .execute();
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

  it("every building with a position outside Manhattan's ZIP codes gets its districts, precinct and zone from the polygons holding it, and its recorded sales' facts", async () => {
    const rows = (await t.rt.store.db.selectFrom('buildings').select(['id', 'data']).execute()).map((r) => ({
      id: r.id,
      b: JSON.parse(r.data),
    }));
    const outside = rows.filter(({ b }) => b.geoCenter && b.address.zipCode && !/^10[0-2]\d\d$/.test(b.address.zipCode));
    expect(outside.length).toBeGreaterThan(100);
    const filled = { communityDistrict: 0, policePrecinct: 0, schoolDistrict: 0 };
    let [withSales, withYear] = [0, 0];
    for (const { id, b } of outside) {
      const res = await get(t.rt.app, `/v1/building/${id}`, t.key);
      const { longitude, latitude } = b.geoCenter;
      const z = zone(longitude, latitude);
      const sold = await soldFacts(id);
      // Marble Hill is Manhattan's with a Bronx ZIP code (10463): PLUTO's lot there wins as anywhere.
      const lot = b.address.street ? pluto.get(`${addressKey(b.address.street)}|${b.address.zipCode}`) : undefined;
      const positive = (v: string | undefined) => (Number(v) > 0 ? Number(v) : null);
      const buildingClass = lot ? lot.BldgClass : sold.buildingClass;
      const expected = {
        communityDistrict: lot ? Number(lot.CD) : district(community(longitude, latitude)),
        councilDistrict: number(council(longitude, latitude)),
        policePrecinct: lot ? Number(lot.PolicePrct) : number(precinct(longitude, latitude)),
        schoolDistrict: number(school(longitude, latitude)),
        buildingClass,
        buildingClassDescription: buildingClass ? expect.any(String) : null,
        hasAbatements: null,
        hurricaneEvacuationZone: z && z !== '0' ? z : null,
      };
      expect(res.body.data.nycData, id).toEqual(expected);
      expect(res.body.data.yearBuilt, id).toBe(b.yearBuilt ?? (lot ? positive(lot.YearBuilt) : null) ?? sold.yearBuilt);
      expect(res.body.data.unitCount, id).toBe(b.unitCount ?? (lot ? positive(lot.UnitsRes) : null) ?? sold.units);
      if (sold.sales) withSales++;
      if (res.body.data.yearBuilt !== null) withYear++;
      for (const k of Object.keys(filled) as (keyof typeof filled)[]) if (expected[k] !== null) filled[k]++;
    }
    console.log(
      `${outside.length} buildings with a position outside Manhattan: community district ${filled.communityDistrict}, precinct ${filled.policePrecinct}, ` +
        `school district ${filled.schoolDistrict}; ${withSales} with recorded sales, ${withYear} with a year built`,
    );
    // Some buildings outside Manhattan have recorded sales at their address, and a year built from them.
    expect(withYear).toBeGreaterThan(0);
    // Buildings on land are in a district, a precinct and a school district.
    for (const n of Object.values(filled)) expect(n).toBeGreaterThan(outside.length * 0.95);
  });

  it("the polygons agree with PLUTO's community district and police precinct on most of Manhattan's tax lots", async () => {
    const lots = await t.rt.store.db
      .selectFrom('tax_lots')
      .select(['latitude', 'longitude', 'community_district', 'police_precinct'])
      .where('latitude', 'is not', null)
      .execute();
    expect(lots.length).toBeGreaterThan(30_000);
    const agree = { communityDistrict: [0, 0], policePrecinct: [0, 0] };
    for (const lot of lots) {
      const [lon, lat] = [Number(lot.longitude), Number(lot.latitude)];
      if (lot.community_district !== null) {
        agree.communityDistrict[1]++;
        if (district(community(lon, lat)) === lot.community_district) agree.communityDistrict[0]++;
      }
      if (lot.police_precinct !== null) {
        agree.policePrecinct[1]++;
        if (number(precinct(lon, lat)) === lot.police_precinct) agree.policePrecinct[0]++;
      }
    }
    const rate = ([same, all]: number[]) => same / all;
    console.log(
      `polygons against PLUTO 16v2 (Manhattan, ${lots.length} lots with a position): community district ${(100 * rate(agree.communityDistrict)).toFixed(2)} % ` +
        `of ${agree.communityDistrict[1]}, police precinct ${(100 * rate(agree.policePrecinct)).toFixed(2)} % of ${agree.policePrecinct[1]}`,
    );
    // The rates docs/open-data.md reports: a lot on a boundary street may fall either side.
    expect(rate(agree.communityDistrict)).toBeGreaterThan(0.97);
    expect(rate(agree.policePrecinct)).toBeGreaterThan(0.97);
  });
});
