import { beforeAll, describe, expect, it } from 'vitest';
import { type Districts, districtLookup } from '../helpers/city-polygons.js';
import { expectProblem, get, walk } from '../helpers/http.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';
import { saleRows } from '../helpers/source-rows.js';

const t = useSharedTestRuntime('business');

type Name = keyof Districts;
const NAMES: Name[] = ['communityDistrict', 'policePrecinct', 'schoolDistrict'];

/** The most frequent non-null values of `name` among `rows`, most frequent first. */
function commonest(rows: Districts[], name: Name, n: number): number[] {
  const counts = new Map<number, number>();
  for (const r of rows) if (r[name] !== null) counts.set(r[name]!, (counts.get(r[name]!) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, n)
    .map(([v]) => v);
}

// Every district here is computed in this file by its own point in polygon from the shared files (test/helpers/city-polygons.ts).
describe('district filters: communityDistrict, policePrecinct and schoolDistrict', () => {
  let at: ReturnType<typeof districtLookup>;
  beforeAll(() => {
    at = districtLookup();
  });

  it('every active listing with a position is stored with the districts holding it (none without one)', async () => {
    const rows = await t.rt.store.db
      .selectFrom('listings')
      .select(['id', 'latitude', 'longitude', 'community_district', 'police_precinct', 'school_district'])
      .where('status', '=', 'ACTIVE')
      .execute();
    expect(rows.length).toBeGreaterThan(10_000);
    let positioned = 0;
    // Every listing is compared; those that differ are reported together, with their ids.
    const differing: { id: string; stored: Districts; expected: Districts }[] = [];
    for (const r of rows) {
      const expected =
        r.latitude === null || r.longitude === null
          ? { communityDistrict: null, policePrecinct: null, schoolDistrict: null }
          : at(Number(r.longitude), Number(r.latitude));
      if (r.latitude !== null) positioned++;
      const stored = { communityDistrict: r.community_district, policePrecinct: r.police_precinct, schoolDistrict: r.school_district };
      if (NAMES.some((name) => stored[name] !== expected[name])) differing.push({ id: r.id, stored, expected });
    }
    expect(differing.slice(0, 20)).toEqual([]);
    expect(positioned).toBeGreaterThan(rows.length * 0.9);
  });

  it("a sale search's total for each district filter equals the source rows' count whose position the listed districts hold", async () => {
    const rows = saleRows().map((s) => ({ id: s.id, price: s.price, ...at(s.longitude, s.latitude) }));
    for (const name of NAMES) {
      const [first, second] = commonest(rows, name, 2);
      for (const listed of [[first], [first, second]]) {
        const expected = rows.filter((r) => r[name] !== null && listed.includes(r[name]!));
        expect(expected.length, `${name}=${listed}`).toBeGreaterThan(10);
        const res = await get(t.rt.app, `/v1/search/sales?${name}=${listed.join(',')}&perPage=1`, t.key);
        expect(res.status).toBe(200);
        expect(res.body.meta.total, `${name}=${listed}`).toBe(expected.length);
      }
    }
    // With a price filter (which the price ladders count) and another district: every listed condition holds.
    const district = commonest(rows, 'communityDistrict', 1)[0];
    const prices = rows
      .filter((r) => r.communityDistrict === district)
      .map((r) => r.price)
      .sort((a, b) => a - b);
    const maxPrice = prices[Math.floor(prices.length / 2)];
    const school = commonest(
      rows.filter((r) => r.communityDistrict === district),
      'schoolDistrict',
      1,
    )[0];
    const expected = rows
      .filter((r) => r.communityDistrict === district && r.schoolDistrict === school && r.price <= maxPrice)
      .map((r) => r.id)
      .sort();
    const { items, total } = await walk(
      t.rt.app,
      `/v1/search/sales?communityDistrict=${district}&schoolDistrict=${school}&maxPrice=${maxPrice}&perPage=500`,
      t.key,
    );
    expect(total).toBe(expected.length);
    expect(items.map((i) => i.id).sort()).toEqual(expected);
  });

  it("a rental search's total for each district filter equals the count of active rentals whose position the district holds", async () => {
    const rows = (
      await t.rt.store.db
        .selectFrom('listings')
        .select(['latitude', 'longitude'])
        .where('kind', '=', 'rental')
        .where('status', '=', 'ACTIVE')
        .execute()
    )
      .filter((r) => r.latitude !== null && r.longitude !== null)
      .map((r) => at(Number(r.longitude), Number(r.latitude)));
    for (const name of NAMES) {
      const listed = commonest(rows, name, 3);
      const expected = rows.filter((r) => r[name] !== null && listed.includes(r[name]!)).length;
      const res = await get(t.rt.app, `/v1/search/rentals?${name}=${listed.join(',')}&perPage=1`, t.key);
      expect(res.body.meta.total, `${name}=${listed}`).toBe(expected);
    }
  });

  it("a recorded sales search's total equals the count of recorded sales whose position the listed district holds; unpositioned sales are in none", async () => {
    const rows = (
      await t.rt.store.db.selectFrom('recorded_sales').select(['latitude', 'longitude']).where('latitude', 'is not', null).execute()
    ).map((r) => at(Number(r.longitude), Number(r.latitude)));
    expect(rows.length).toBeGreaterThan(1000);
    for (const name of NAMES) {
      const listed = commonest(rows, name, 2);
      const expected = rows.filter((r) => r[name] !== null && listed.includes(r[name]!)).length;
      const res = await get(t.rt.app, `/v1/recorded-sales?${name}=${listed.join(',')}&perPage=1`, t.key);
      expect(res.status).toBe(200);
      expect(res.body.meta.total, `${name}=${listed}`).toBe(expected);
    }
  });

  it('a joint-interest area (164, Central Park) or an unknown number matches nothing; a malformed list is a 400 that names the parameter', async () => {
    for (const query of ['communityDistrict=164', 'policePrecinct=999', 'schoolDistrict=99']) {
      const res = await get(t.rt.app, `/v1/search/sales?${query}`, t.key);
      expect(res.status).toBe(200);
      expect(res.body.meta.total, query).toBe(0);
    }
    for (const path of ['/v1/search/sales', '/v1/search/rentals', '/v1/recorded-sales']) {
      for (const query of [
        'communityDistrict=abc',
        'policePrecinct=1,,2',
        'schoolDistrict=123',
        'communityDistrict=',
        `policePrecinct=${Array.from({ length: 51 }, (_, i) => i + 1).join(',')}`,
      ]) {
        const body = await expectProblem(t.rt.app, `${path}?${query}`, 400, 'INVALID_PARAMS', t.key);
        expect(
          body.errors.map((e: { name: string }) => e.name),
          query,
        ).toContain(query.split('=')[0]);
      }
    }
  });
});
