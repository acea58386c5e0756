// @ts-expect-error geojson-validation ships no types
import geojsonValidation from 'geojson-validation';
import { describe, expect, it } from 'vitest';
import { expectProblem, get, walk } from '../helpers/http.js';
import { decodePolyline, encodePolyline, haversine, inRings } from '../helpers/geometry.js';
import { startTestRuntime, useSharedTestRuntime } from '../helpers/runtime.js';
import { siteAreas } from '../helpers/source-rows.js';

// Map search: expectations computed here from every listing's position (the site data the local
// upstream serves) with a point-in-box test, a haversine written here, and ray casting over the
// site's real outline.
const t = useSharedTestRuntime('pro');
const positions = (kind: 'sale' | 'rental') =>
  t.rt.siteData.listings
    .filter((l) => l.kind === kind && l.node.status === 'ACTIVE')
    .map((l) => ({ id: l.node.id, ...l.node.geoPoint!, beds: l.node.bedroomCount }));

describe('map search', () => {
  it('bbox: the total equals a point-in-box count over every listing, with other filters and across pages', async () => {
    const box = [-73.99, 40.72, -73.95, 40.76];
    const inBox = positions('rental').filter(
      (p) => p.longitude >= box[0] && p.longitude <= box[2] && p.latitude >= box[1] && p.latitude <= box[3],
    );
    expect(inBox.length).toBeGreaterThan(100);
    const res = await get(t.rt.app, `/v1/search/rentals?bbox=${box.join(',')}&perPage=1`, t.key);
    expect(res.body.meta.total).toBe(inBox.length);
    const twoBeds = inBox.filter((p) => p.beds !== null && p.beds >= 2);
    const walked = await walk(t.rt.app, `/v1/search/rentals?bbox=${box.join(',')}&minBeds=2&perPage=40`, t.key);
    expect(walked.items.map((i) => i.id).sort()).toEqual(twoBeds.map((p) => p.id).sort());
  });

  it("bbox edges are inside: a box that is one listing's own point finds every listing on that point", async () => {
    const point = positions('rental').find((p) => p.beds !== null)!;
    const here = positions('rental').filter((p) => p.latitude === point.latitude && p.longitude === point.longitude);
    const box = [point.longitude, point.latitude, point.longitude, point.latitude];
    const walked = await walk(t.rt.app, `/v1/search/rentals?bbox=${box.join(',')}&perPage=50`, t.key);
    expect(walked.items.map((i) => i.id).sort()).toEqual(here.map((p) => p.id).sort());
    expect(here.length).toBeGreaterThan(0);
  });

  it('near and radius: the total counts the positions whose haversine distance, rounded to the metre, is within it, by either sort; sort=DISTANCE is non-decreasing and each item says its distance', async () => {
    const centre = { latitude: 40.7527, longitude: -73.9772 }; // Grand Central
    for (const [kind, radius] of [
      ['sale', 800],
      ['rental', 2500],
    ] as const) {
      const expected = positions(kind).filter((p) => Math.round(haversine(centre, p)) <= radius);
      expect(expected.length, kind).toBeGreaterThan(20);
      const walked = await walk(
        t.rt.app,
        `/v1/search/${kind === 'sale' ? 'sales' : 'rentals'}?near=${centre.latitude},${centre.longitude}&radius=${radius}&sort=DISTANCE&sortDir=ASC&perPage=500`,
        t.key,
      );
      expect(walked.total).toBe(expected.length);
      // By price the search index answers (DISTANCE is the store's): the same listings, each at the same distance.
      await t.rt.reads.searcher.index!.current();
      const byPrice = await walk(
        t.rt.app,
        `/v1/search/${kind === 'sale' ? 'sales' : 'rentals'}?near=${centre.latitude},${centre.longitude}&radius=${radius}&sort=PRICE&perPage=500`,
        t.key,
      );
      const byId = (items: { id: string; distance: number }[]) => items.map((i) => `${i.id} ${i.distance}`).sort();
      expect(byId(byPrice.items)).toEqual(byId(walked.items));
      const distances = walked.items.map((i) => i.distance as number);
      expect(distances).toEqual([...distances].sort((a, b) => a - b));
      for (const item of walked.items.slice(0, 50))
        expect(Math.abs(item.distance - haversine(centre, item.geoPoint))).toBeLessThanOrEqual(1);
    }
    // Without sortDir, DISTANCE is nearest first; the other sorts keep the interface's DESC.
    const near = `near=${centre.latitude},${centre.longitude}&radius=800&perPage=50`;
    const byDefault = await get(t.rt.app, `/v1/search/sales?${near}&sort=DISTANCE`, t.key);
    const ascending = await get(t.rt.app, `/v1/search/sales?${near}&sort=DISTANCE&sortDir=ASC`, t.key);
    expect(byDefault.body.data.map((i: { id: string }) => i.id)).toEqual(ascending.body.data.map((i: { id: string }) => i.id));
    const prices = (await get(t.rt.app, `/v1/search/sales?${near}&sort=PRICE`, t.key)).body.data.map((i: { price: number }) => i.price);
    expect(prices).toEqual([...prices].sort((a, b) => b - a));
  });

  it('polygon: the total equals a point-in-polygon count over the real outline of Greenpoint', async () => {
    const greenpoint = siteAreas().find((a) => a.numericId === 301) as unknown as { geometry: { encodedBoundary: string } };
    const ring = decodePolyline(greenpoint.geometry.encodedBoundary);
    const expected = positions('rental').filter((p) => inRings([ring], p.longitude, p.latitude));
    expect(expected.length).toBeGreaterThan(10);
    const res = await get(
      t.rt.app,
      `/v1/search/rentals?polygon=${encodeURIComponent(greenpoint.geometry.encodedBoundary)}&perPage=500`,
      t.key,
    );
    expect(res.body.data.map((i: { id: string }) => i.id).sort()).toEqual(expected.map((p) => p.id).sort());
  });

  it('polygon over more listings than SQLite takes parameters in a statement: the store answers it too', async () => {
    // Manhattan and Brooklyn's west, near what the equivalence test once drew: over 32,766 rentals in the outline. Its
    // corners are off the positions' 4-decimal grid, so no listing lies on one (where the two tests may differ).
    const ring = [
      [-73.94665, 40.82725],
      [-73.94925, 40.76305],
      [-74.15415, 40.58015],
      [-74.03005, 40.90005],
      [-73.94665, 40.82725],
    ];
    const encoded = encodePolyline(ring);
    expect(decodePolyline(encoded)).toEqual(ring);
    const expected = positions('rental').filter((p) => inRings([ring], p.longitude, p.latitude));
    expect(expected.length).toBeGreaterThan(32_766);
    const store = await startTestRuntime({ SEARCH_INDEX: 'false' });
    try {
      const key = await store.key('pro');
      for (const rt of [t.rt, store]) {
        const res = await get(rt.app, `/v1/search/rentals?polygon=${encodeURIComponent(encoded)}&perPage=1`, rt === t.rt ? t.key : key);
        expect(res.status).toBe(200);
        expect(res.body.meta.total).toBe(expected.length);
      }
    } finally {
      await store.close();
    }
  });

  it('bad geography is a 400 naming the parameter', async () => {
    for (const [query, name] of [
      ['bbox=-73.9,40.8,-74.0,40.7', 'bbox'],
      ['bbox=1,2,3', 'bbox'],
      ['near=95,10', 'near'],
      ['radius=100', 'radius'],
      ['near=40.7,-73.9&radius=60000', 'radius'],
      ['sort=DISTANCE', 'sort'],
      ['polygon=%3F%3F%3F%3F%3F%3F', 'polygon'],
    ] as const) {
      const body = await expectProblem(t.rt.app, `/v1/search/rentals?${query}`, 400, 'INVALID_PARAMS', t.key);
      expect(
        body.errors.map((e: { name: string }) => e.name),
        query,
      ).toContain(name);
    }
  });
});

describe('GeoJSON and CSV', () => {
  it('format=geojson (or Accept: application/geo+json) gives a FeatureCollection of the same page; CSV parses back to the same rows', async () => {
    const url = '/v1/search/sales?areas=100&minPrice=1000000&perPage=25&page=2';
    const json = (await get(t.rt.app, url, t.key)).body;
    for (const [query, accept] of [
      ['&format=geojson', undefined],
      ['', 'application/geo+json'],
    ] as const) {
      const res = await t.rt.app.inject({ url: url + query, headers: { authorization: `Bearer ${t.key}`, ...(accept ? { accept } : {}) } });
      expect(res.headers['content-type']).toMatch(/^application\/geo\+json/);
      const fc = JSON.parse(res.body);
      // An independent GeoJSON (RFC 7946) validator: no errors.
      expect((geojsonValidation as any).valid(fc, true)).toEqual([]);
      expect(fc.type).toBe('FeatureCollection');
      expect(fc.meta.total).toBe(json.meta.total);
      expect(fc.features.map((f: any) => f.id)).toEqual(json.data.map((l: any) => l.id));
      for (const [i, f] of fc.features.entries()) {
        expect(f).toMatchObject({
          type: 'Feature',
          geometry: { type: 'Point', coordinates: [json.data[i].geoPoint.longitude, json.data[i].geoPoint.latitude] },
        });
        const { geoPoint: _unused, ...rest } = json.data[i];
        expect(f.properties).toEqual(rest);
      }
      expect(res.headers.link).toContain('rel="next"');
    }
    const csv = await t.rt.app.inject({ url: `${url}&format=csv`, headers: { authorization: `Bearer ${t.key}` } });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['x-total-count']).toBe(String(json.meta.total));
    const { parse } = await import('csv-parse/sync');
    const rows = parse(csv.body, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.id)).toEqual(json.data.map((l: any) => l.id));
    for (const [i, r] of rows.entries()) {
      const l = json.data[i];
      expect(r).toMatchObject({
        price: String(l.price),
        street: l.address.street ?? '',
        latitude: String(l.geoPoint.latitude),
        urlPath: l.urlPath ?? '',
        areaName: l.areaName ?? '',
      });
    }
  });
});
