import { describe, expect, it } from 'vitest';
import { decodeOutline } from '../../src/domain/outline.js';
import { expectProblem, get } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';
import { siteAreas } from '../helpers/source-rows.js';

const t = useSharedTestRuntime('pro');

describe('area outlines', () => {
  it('/v1/areas/{id} gives the area with its real outline as GeoJSON; include=boundary does it for the list', async () => {
    const site = siteAreas().find((a) => a.numericId === 301) as unknown as {
      id: string;
      name: string;
      geometry: { encodedBoundary: string };
    };
    const one = await get(t.rt.app, '/v1/areas/301', t.key);
    expect(one.status).toBe(200);
    expect(one.body.data).toMatchObject({ id: 301, name: site.name, slug: site.id, parentId: 200 });
    expect(one.body.data.boundary).toEqual(decodeOutline(site.geometry.encodedBoundary));
    expect(one.body.data.boundary.coordinates[0].length).toBeGreaterThan(3);
    const list = await get(t.rt.app, '/v1/areas?level=2&borough=200&include=boundary', t.key);
    expect(list.body.data.every((a: { boundary: { type: string } }) => a.boundary.type === 'Polygon')).toBe(true);
    expect((await get(t.rt.app, '/v1/areas?level=0', t.key)).body.data[0].boundary).toBeUndefined();
    await expectProblem(t.rt.app, '/v1/areas/999999', 404, 'NOT_FOUND', t.key);
    await expectProblem(t.rt.app, '/v1/areas/abc', 400, 'INVALID_PARAMS', t.key);
  });
});

describe('batch lookup', () => {
  it('answers in the order asked, lists the ids it does not hold, and counts as one request', async () => {
    const key = await t.rt.key('starter');
    const before = (await get(t.rt.app, '/v1/usage', key)).body.data.month.used;
    const res = await get(t.rt.app, '/v1/properties?ids=1545,nope-1,8000000,1545,2011', key);
    expect(res.status).toBe(200);
    expect(res.body.data.map((l: { id: string }) => l.id)).toEqual(['1545', '8000000', '2011']);
    expect(res.body.meta.missing).toEqual(['nope-1']);
    for (const listing of res.body.data) {
      const single = await get(t.rt.app, `/v1/property/${listing.id}`, key);
      expect(listing).toEqual(single.body.data);
    }
    expect((await get(t.rt.app, '/v1/usage', key)).body.data.month.used).toBe(before + 1 + 3);
    await expectProblem(
      t.rt.app,
      `/v1/properties?ids=${Array.from({ length: 51 }, (_, i) => i + 1).join(',')}`,
      400,
      'INVALID_PARAMS',
      key,
    );
    await expectProblem(t.rt.app, '/v1/properties', 400, 'INVALID_PARAMS', key);
  });
});

describe('comparables', () => {
  it('same kind, active, within the radius, most similar first, the score by the documented formula; pro and up', async () => {
    const subject = (await get(t.rt.app, '/v1/property/1545', t.key)).body.data;
    const res = await get(t.rt.app, '/v1/property/1545/comparables?limit=12', t.key);
    expect(res.status).toBe(200);
    const { radius } = res.body.meta;
    expect(res.body.data.length).toBe(12);
    const rad = Math.PI / 180;
    const metres = (a: any, b: any) =>
      2 *
      6_371_000 *
      Math.asin(
        Math.sqrt(
          Math.sin(((b.latitude - a.latitude) * rad) / 2) ** 2 +
            Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(((b.longitude - a.longitude) * rad) / 2) ** 2,
        ),
      );
    const part = (a: number | null, b: number | null, scale: number) =>
      a === null || b === null ? 0.5 : Math.max(0, 1 - Math.abs(a - b) / scale);
    const scores = [];
    for (const c of res.body.data) {
      const detail = (await get(t.rt.app, `/v1/property/${c.listing.id}`, t.key)).body.data;
      expect(detail).toMatchObject({ status: 'ACTIVE', urlPath: expect.stringMatching(/^\/rental\//) });
      expect(c.listing.id).not.toBe('1545');
      expect(Math.abs(metres(subject.geoPoint, detail.geoPoint) - c.distance)).toBeLessThanOrEqual(1);
      expect(c.distance).toBeLessThanOrEqual(radius);
      const expected =
        0.35 * part(subject.price, detail.price, subject.price) +
        0.25 * part(subject.bedroomCount, detail.bedroomCount, 3) +
        0.15 * part(subject.fullBathroomCount, detail.fullBathroomCount, 2) +
        0.15 * part(subject.sqft, detail.sqft, subject.sqft ?? 1) +
        0.1 * Math.max(0, 1 - c.distance / radius);
      expect(c.similarity).toBeCloseTo(Math.round(expected * 1000) / 10, 5);
      scores.push(c.similarity);
    }
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    console.log(
      `comparables of 1545 (radius ${radius} m): ${res.body.data
        .slice(0, 3)
        .map((c: any) => `${c.listing.id} ${c.similarity} at ${c.distance} m`)
        .join('; ')}`,
    );
    await expectProblem(t.rt.app, '/v1/property/1545/comparables', 403, 'PLAN_REQUIRED', await t.rt.key('starter'));
    await expectProblem(t.rt.app, '/v1/property/nope/comparables', 404, 'NOT_FOUND', t.key);
  });
});
