import polyline from '@mapbox/polyline';
import { describe, expect, it } from 'vitest';
import { expectProblem, get } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

const t = useSharedTestRuntime('pro');

/** Most of Manhattan and western Brooklyn. */
const BOX = [-74.02, 40.65, -73.93, 40.8] as const;

/** The grid the endpoint documents, computed here: 32-pixel cells at the zoom, square at the box's latitude rounded to a degree. */
function cellOf(zoom: number, longitude: number, latitude: number) {
  const width = 360 / 2 ** zoom / 8;
  const height = width * Math.cos((Math.round((BOX[1] + BOX[3]) / 2) * Math.PI) / 180);
  return `${Math.floor((longitude + 180) / width)},${Math.floor((latitude + 90) / height)}`;
}

describe("GET /v1/search/{kind}/clusters: every match in view, counted on the map's grid", () => {
  it("each cell's count, centroid and price range are those of the matching rentals in it, and the counts sum to the search's total", async () => {
    const rows = await t.rt.store.db
      .selectFrom('listings')
      .select(['latitude', 'longitude', 'price'])
      .where('kind', '=', 'rental')
      .where('status', '=', 'ACTIVE')
      .where('price', '<=', 3000)
      .execute();
    const inBox = rows.filter(
      (r) =>
        r.longitude !== null &&
        r.latitude !== null &&
        r.longitude >= BOX[0] &&
        r.longitude <= BOX[2] &&
        r.latitude >= BOX[1] &&
        r.latitude <= BOX[3],
    );
    for (const zoom of [11, 13]) {
      const expected = new Map<string, { count: number; lat: number; lon: number; min: number; max: number }>();
      for (const r of inBox) {
        const key = cellOf(zoom, Number(r.longitude), Number(r.latitude));
        const cell = expected.get(key) ?? { count: 0, lat: 0, lon: 0, min: Infinity, max: -Infinity };
        expected.set(key, {
          count: cell.count + 1,
          lat: cell.lat + Number(r.latitude),
          lon: cell.lon + Number(r.longitude),
          min: Math.min(cell.min, Number(r.price)),
          max: Math.max(cell.max, Number(r.price)),
        });
      }
      const res = await get(t.rt.app, `/v1/search/rentals/clusters?maxPrice=3000&bbox=${BOX.join(',')}&zoom=${zoom}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length, `zoom ${zoom}`).toBe(expected.size);
      expect(expected.size).toBeGreaterThan(zoom === 11 ? 5 : 50);
      for (const cell of res.body.data) {
        // The cell's own bounds hold its centroid, and the cell is the one computed here from each listing's position.
        const [w, s, e, n] = cell.cell;
        expect(cell.longitude).toBeGreaterThanOrEqual(w - 1e-6);
        expect(cell.longitude).toBeLessThanOrEqual(e + 1e-6);
        expect(cell.latitude).toBeGreaterThanOrEqual(s - 1e-6);
        expect(cell.latitude).toBeLessThanOrEqual(n + 1e-6);
        const mine = expected.get(cellOf(zoom, (w + e) / 2, (s + n) / 2))!;
        expect(mine, JSON.stringify(cell)).toBeDefined();
        expect(cell.count).toBe(mine.count);
        expect(cell.latitude).toBeCloseTo(mine.lat / mine.count, 5);
        expect(cell.longitude).toBeCloseTo(mine.lon / mine.count, 5);
        expect([cell.minPrice, cell.maxPrice]).toEqual([mine.min, mine.max]);
      }
      const search = await get(t.rt.app, `/v1/search/rentals?maxPrice=3000&bbox=${BOX.join(',')}&perPage=1`);
      expect(res.body.meta.total).toBe(inBox.length);
      expect(res.body.meta.total).toBe(search.body.meta.total);
      expect(res.body.meta).toMatchObject({ zoom, source: search.body.meta.source, dataAge: search.body.meta.dataAge });
    }
  });

  it('takes every filter of the search (an amenity, a district, a polygon): the counts sum to its total', async () => {
    // A triangle over Lower Manhattan, as the site's encoded polyline (latitude first).
    const polygon = encodeURIComponent(
      polyline.encode([
        [40.7, -74.02],
        [40.73, -74.02],
        [40.73, -73.98],
        [40.7, -74.02],
      ]),
    );
    for (const filters of ['amenities=DOORMAN', 'communityDistrict=301,302', 'minBeds=2&noFee=true', `polygon=${polygon}`]) {
      for (const kind of ['rentals', 'sales']) {
        if (kind === 'sales' && filters.includes('noFee')) continue;
        const cells = await get(t.rt.app, `/v1/search/${kind}/clusters?${filters}&bbox=${BOX.join(',')}&zoom=12`);
        expect(cells.status, `${kind} ${filters}: ${JSON.stringify(cells.body)}`).toBe(200);
        const search = await get(t.rt.app, `/v1/search/${kind}?${filters}&bbox=${BOX.join(',')}&perPage=1`);
        const sum = cells.body.data.reduce((n: number, c: { count: number }) => n + c.count, 0);
        expect(sum, `${kind} ${filters}`).toBe(search.body.meta.total);
        expect(cells.body.meta.total).toBe(sum);
      }
    }
  });

  it('needs a box and a zoom of 0 to 22, and takes no page, order or format parameter', async () => {
    for (const query of [
      'zoom=12',
      `bbox=${BOX.join(',')}`,
      `bbox=${BOX.join(',')}&zoom=23`,
      `bbox=${BOX.join(',')}&zoom=12&sort=PRICE`,
      `bbox=${BOX.join(',')}&zoom=12&page=2`,
      `bbox=-73,40,-74,41&zoom=12`,
    ]) {
      await expectProblem(t.rt.app, `/v1/search/rentals/clusters?${query}`, 400, 'INVALID_PARAMS');
    }
  });
});
