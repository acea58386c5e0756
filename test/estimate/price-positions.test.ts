import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { drawn } from '../helpers/draws.js';
import { expectProblem, get, walk } from '../helpers/http.js';
import { type TestRuntime, useSharedTestRuntime, useTestRuntime } from '../helpers/runtime.js';

// The template's sync ended with a valuation (the hydration's last step): every active listing's price position is stored.
// Read on the runtime this test worker shares; the valuation's own tests write, on a runtime of their own.
const t = useSharedTestRuntime('pro');

interface Positioned {
  id: string;
  kind: string;
  borough_id: number | null;
  price: number;
  price_position: number | null;
}

const positioned = async (rt: TestRuntime = t.rt): Promise<Positioned[]> =>
  (await rt.store.db
    .selectFrom('listings')
    .select(['id', 'kind', 'borough_id', 'price', 'price_position'])
    .where('status', '=', 'ACTIVE')
    .orderBy('id')
    .execute()) as Positioned[];

describe('stored price positions', () => {
  it("are the listing detail's pricePosition, stored for the whole city by the sync's valuation", async () => {
    const rows = await positioned();
    for (const kind of ['rental', 'sale']) {
      const ofKind = rows.filter((r) => r.kind === kind);
      // A listing without a position, or with too few comparables near it, has none.
      expect(ofKind.filter((r) => r.price_position !== null).length).toBeGreaterThan(0.9 * ofKind.length);
      for (const row of [
        ...drawn(ofKind, 12, 7),
        ...drawn(
          ofKind.filter((r) => r.price_position === null),
          3,
          7,
        ),
      ]) {
        const detail = (await get(t.rt.app, `/v1/property/${row.id}`, t.key)).body.data;
        expect({ id: row.id, pricePosition: detail.pricePosition }).toEqual({ id: row.id, pricePosition: row.price_position });
      }
    }
  });

  it('a search with maxPricePosition keeps exactly the active listings stored at or under it', async () => {
    const rows = await positioned();
    for (const [kind, path, bounds] of [
      ['rental', 'rentals', 'minPrice=2500&maxPrice=2800'],
      ['sale', 'sales', 'minPrice=500000&maxPrice=900000'],
    ] as const) {
      const [low, high] = bounds.match(/[0-9]+/g)!.map(Number);
      for (const most of [-10, 0, 2.5]) {
        const expected = rows
          .filter((r) => r.kind === kind && r.price >= low && r.price <= high && r.price_position !== null && r.price_position <= most)
          .map((r) => r.id)
          .sort();
        expect(expected.length).toBeGreaterThan(10);
        const found = await walk(t.rt.app, `/v1/search/${path}?${bounds}&maxPricePosition=${most}&perPage=500`, t.key);
        expect(found.total).toBe(expected.length);
        expect(found.items.map((l: { id: string }) => l.id).sort()).toEqual(expected);
      }
    }
  });

  it('bad maxPricePosition is a 400 problem naming it', async () => {
    for (const value of ['abc', '-101', '1e9', '']) {
      const problem = await expectProblem(t.rt.app, `/v1/search/rentals?maxPricePosition=${value}`, 400, 'INVALID_PARAMS', t.key);
      expect(problem.errors.map((e: { name: string }) => e.name)).toContain('maxPricePosition');
    }
  });
});

describe('the valuation', () => {
  // Its mechanics on the city without the RentHop rentals: a run values a sixth of the listings the whole city has.
  const v = useTestRuntime('pro', {}, { withoutRentHop: true });
  const dataVersion = () => v.rt.listings.dataVersion();

  it('writes only the positions that changed, moving the data version only when it writes', async () => {
    const rows = (await positioned(v.rt)).filter((r) => r.price_position !== null);
    const spoiled = drawn(rows, 5, 11);
    for (const [i, row] of spoiled.entries()) {
      await v.rt.store.db
        .updateTable('listings')
        .set({ price_position: i < 3 ? 999 : null })
        .where('id', '=', row.id)
        .execute();
    }
    const before = await dataVersion();
    await v.rt.valuation.run();
    expect(v.rt.valuation.state()).toMatchObject({ lastChanged: 5, lastValued: (await positioned(v.rt)).length, failedRuns: 0 });
    // One write a kind that changed.
    expect(await dataVersion()).toBe(before + new Set(spoiled.map((r) => r.kind)).size);
    const after = new Map((await positioned(v.rt)).map((r) => [r.id, r.price_position]));
    for (const row of spoiled) expect(after.get(row.id)).toBe(row.price_position);

    const settled = await dataVersion();
    await v.rt.valuation.run();
    expect(v.rt.valuation.state()).toMatchObject({ lastChanged: 0, runs: 2 });
    expect(await dataVersion()).toBe(settled);
  });

  it("a crawl that finds a new price clears the listing's position; the next valuation places the new price", async () => {
    const rows = (await positioned(v.rt)).filter((r) => r.kind === 'sale' && r.borough_id === 400 && r.price_position !== null);
    const subject = drawn(rows, 1, 3)[0];
    const node = v.rt.siteData.listings.find((l) => l.node.id === subject.id)!.node;
    node.price = Math.round(subject.price * 0.8);
    await v.rt.syncer.syncScope('sale', 400, { hydrate: false });
    const stored = new Map((await positioned(v.rt)).map((r) => [r.id, r.price_position]));
    expect(stored.get(subject.id)).toBeNull();
    // The others of the scope keep theirs.
    expect(rows.filter((r) => r.id !== subject.id && stored.get(r.id) !== r.price_position)).toEqual([]);

    await v.rt.valuation.run();
    const estimate = (await get(v.rt.app, `/v1/property/${subject.id}/estimate`, v.key)).body.data;
    expect(estimate.pricePosition).toEqual(expect.any(Number));
    const [row] = await v.rt.store.db.selectFrom('listings').select('price_position').where('id', '=', subject.id).execute();
    expect(row.price_position).toBe(estimate.pricePosition);
  });

  it('shows in /v1/health and the metrics; a kind it cannot store is given up after its attempts and logged', async () => {
    const health = (await get(v.rt.app, '/v1/health')).body;
    expect(health.valuation).toMatchObject({ enabled: true, running: false, failedRuns: 0, lastError: null });
    // The column taken away: every write of a position fails, as with a store that refuses it.
    await sql`alter table listings rename column price_position to price_position_away`.execute(v.rt.store.db);
    try {
      await v.rt.valuation.run();
    } finally {
      await sql`alter table listings rename column price_position_away to price_position`.execute(v.rt.store.db);
    }
    const failed = (await get(v.rt.app, '/v1/health')).body.valuation;
    expect(failed).toMatchObject({ failedRuns: 1, lastError: expect.stringContaining('price_position'), lastErrorAt: expect.any(String) });
    const metrics = (await v.rt.metrics.scrape()).body;
    expect(metrics).toContain(`nyc_listings_valuation_runs ${failed.runs}`);
    expect(metrics).toContain('nyc_listings_valuation_failed_runs 1');
    await v.rt.valuation.run();
    expect(v.rt.valuation.state()).toMatchObject({ failedRuns: 1, runs: failed.runs + 1 });
  });
});
