import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScopeFreshness } from '../../src/freshness/scopes.js';
import { Mirror } from '../../src/read/mirror.js';
import { PriceLadders } from '../../src/search/price-ladders.js';
import { AreasRepository } from '../../src/store/areas-repository.js';
import { BuildingsRepository } from '../../src/store/buildings-repository.js';
import { MarketRepository } from '../../src/store/market-repository.js';
import type { Database as Schema } from '../../src/store/schema.js';
import type { ListingsRepository } from '../../src/store/listings-repository.js';
import type { ListingSearch } from '../../src/search/listing-search.js';
import { get } from '../helpers/http.js';
import { useTestRuntime } from '../helpers/runtime.js';
import { rentalRows, saleRows } from '../helpers/source-rows.js';
import { everyListing, waitForLadders } from '../helpers/ladders.js';
import { sqliteWithLog } from '../helpers/statement-log.js';

// Totals of searches by kind, areas, price and bedrooms are counted in memory (docs/decisions.md, "Search totals");
// every expectation here is computed from the source rows in this file.
// The store's own totals: the search index (SEARCH_INDEX) would answer these searches before them.
const t = useTestRuntime('pro', { SEARCH_INDEX: 'off' });
const rentals = rentalRows();
const sales = saleRows();
const BOROUGHS = [
  [100, 'Manhattan'],
  [200, 'Brooklyn'],
  [300, 'Queens'],
  [400, 'Bronx'],
  [500, 'Staten Island'],
] as const;
/** The distinct rents, ascending: bounds drawn from them make prices equal to a bound common. */
const RENTS = [...new Set(rentals.map((r) => Number(r.rent)))].sort((a, b) => a - b);

/** How many source rentals a search of these bounds matches (in `boroughs` by name, when given); bounds included. */
function rentalsMatching(b: { boroughs?: string[]; minPrice?: number; maxPrice?: number; minBeds?: number; maxBeds?: number }): number {
  return rentals.filter((r) => {
    const bedrooms = Math.floor(Number(r.bedrooms));
    const rent = Number(r.rent);
    return (
      (!b.boroughs || b.boroughs.includes(r.borough)) &&
      (b.minPrice === undefined || rent >= b.minPrice) &&
      (b.maxPrice === undefined || rent <= b.maxPrice) &&
      (b.minBeds === undefined || bedrooms >= b.minBeds) &&
      (b.maxBeds === undefined || bedrooms <= b.maxBeds)
    );
  }).length;
}

describe('search totals', () => {
  it('counted in memory, equal the source rows for any areas, price and bedroom bounds (bounds included)', async () => {
    const ladders = t.rt.mirror.searcher.priceLadders;
    await waitForLadders(t.rt.mirror.searcher.priceLadders);
    expect(await ladders.total(everyListing('rental'))).toBe(rentals.length);
    expect(await ladders.total(everyListing('sale'))).toBe(sales.length);
    // A filter the ladders do not hold is left to the store.
    expect(await ladders.total({ ...everyListing('rental'), noFee: true })).toBeUndefined();

    const bound = fc.option(fc.constantFrom(...RENTS), { nil: undefined });
    const beds = fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined });
    const areas = fc.option(fc.subarray(BOROUGHS.map(([id]) => id), { minLength: 1 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(areas, bound, bound, beds, beds, async (areaIds, low, high, fewest, most) => {
        const [minPrice, maxPrice] = low !== undefined && high !== undefined && low > high ? [high, low] : [low, high];
        const [minBeds, maxBeds] = fewest !== undefined && most !== undefined && fewest > most ? [most, fewest] : [fewest, most];
        const boroughs = areaIds && BOROUGHS.filter(([id]) => areaIds.includes(id)).map(([, name]) => name as string);
        const expected = rentalsMatching({ boroughs, minPrice, maxPrice, minBeds, maxBeds });
        const query = Object.entries({ areas: areaIds?.join(','), minPrice, maxPrice, minBeds, maxBeds })
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${v}`)
          .join('&');
        const res = await get(t.rt.app, `/v1/search/rentals?${query}&perPage=1`, t.key);
        expect(res.body.meta.total, query).toBe(expected);
        if (!areaIds) expect(await ladders.total({ ...everyListing('rental'), minPrice, maxPrice, minBeds, maxBeds }), query).toBe(expected);
      }),
      { numRuns: 80, seed: 2016 },
    );
    // Still current: the totals above were the ladders' (the store's count runs only when they are not).
    expect(await ladders.total(everyListing('rental'))).toBe(rentals.length);

    // Sales: price bounds; a bedroom bound matches no listing of unknown bedrooms, as in the store.
    const prices = sales.map((r) => r.price).sort((a, b) => a - b);
    const [low, high] = [prices[Math.floor(prices.length / 4)], prices[Math.floor((prices.length * 3) / 4)]];
    const between = await get(t.rt.app, `/v1/search/sales?minPrice=${low}&maxPrice=${high}&perPage=1`, t.key);
    expect(between.body.meta.total).toBe(prices.filter((p) => p >= low && p <= high).length);
    const withBeds = await get(t.rt.app, '/v1/search/sales?minBeds=0&perPage=1', t.key);
    expect(withBeds.body.meta.total).toBe(sales.filter((r) => r.bedrooms !== null).length);
    expect(sales.filter((r) => r.bedrooms === null).length).toBeGreaterThan(0);
  });

  it('with the no side of yes/no filters (the total without one less its yes side), equal the source rows', async () => {
    await waitForLadders(t.rt.mirror.searcher.priceLadders);
    // The 2016 sample knows whether a rental has no fee (no_fee 1 or 0) and nothing of pets, furniture or
    // a 3D tour (unknown: their no side is every rental). Yes-side counts are the store's, kept as totals.
    const side = fc.constantFrom(undefined, true, false);
    const no = fc.constantFrom(undefined, false);
    const areas = fc.option(fc.subarray(BOROUGHS.map(([id]) => id), { minLength: 1 }), { nil: undefined });
    const bound = fc.option(fc.constantFrom(...RENTS), { nil: undefined });
    const beds = fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(side, no, no, no, areas, bound, beds, fc.integer({ min: 1, max: 3 }), async (noFee, petsAllowed, furnished, has3dTour, areaIds, maxPrice, minBeds, page) => {
        const boroughs = areaIds && BOROUGHS.filter(([id]) => areaIds.includes(id)).map(([, name]) => name as string);
        const expected = rentals.filter(
          (r) =>
            (noFee === undefined || (r.no_fee === '1') === noFee) &&
            (!boroughs || boroughs.includes(r.borough)) &&
            (maxPrice === undefined || Number(r.rent) <= maxPrice) &&
            (minBeds === undefined || Math.floor(Number(r.bedrooms)) >= minBeds),
        ).length;
        const query = Object.entries({ noFee, petsAllowed, furnished, has3dTour, areas: areaIds?.join(','), maxPrice, minBeds, page })
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${v}`)
          .join('&');
        const res = await get(t.rt.app, `/v1/search/rentals?${query}&perPage=2`, t.key);
        expect(res.status, query).toBe(200);
        expect(res.body.meta.total, query).toBe(expected);
        expect(res.body.data.length, query).toBe(Math.max(0, Math.min(2, expected - (page - 1) * 2)));
      }),
      { numRuns: 80, seed: 2016 },
    );
  });

  it('a no side is counted on its yes side: every count the store runs for it asks a yes (the partial index), none a no', async () => {
    const { db, statements, mirror } = loggedMirror();
    try {
      await waitForLadders(mirror.searcher.priceLadders);
      for (const flags of [{ noFee: false }, { noFee: false, furnished: false, petsAllowed: false }]) {
        statements.length = 0;
        const answer = await mirror.search({ ...everyListing('rental'), ...flags, perPage: 5 }, []);
        expect(answer.total, JSON.stringify(flags)).toBe(rentals.filter((r) => r.no_fee !== '1').length);
        const counts = statements.map((q) => q.sql).filter((text) => text.includes('count(*)'));
        // One yes count per no side (the rest from the price ladders), each naming a flag = 1.
        expect(counts.length, JSON.stringify(flags)).toBe(Object.keys(flags).length);
        for (const text of counts) expect(text).toMatch(/"(no_fee|furnished|pets_allowed)" = 1/);
        expect(counts.some((text) => /"no_fee" = 1/.test(text) && !/"no_fee" is null/.test(text))).toBe(true);
      }
    } finally {
      await db.destroy();
    }
  });

  it('a total being counted is counted once: searches asking the same filters meanwhile, by any page or order, wait for it', async () => {
    // One instant for every search: a kept total's key holds the minute, which must not turn between them.
    const now = new Date();
    const { db, statements, mirror } = loggedMirror(() => now);
    try {
      await waitForLadders(mirror.searcher.priceLadders);
      // A filter the price ladders do not hold, so the store counts; eight pages and orders asked at once.
      const expected = rentals.filter((r) => r.no_fee === '1').length;
      const asked = (['PRICE', 'LISTED_AT', 'RECOMMENDED', 'PRICE_PER_SQFT'] as const).flatMap((sort) => [1, 2].map((page) => ({ ...everyListing('rental'), noFee: true, sort, page, perPage: 3 })));
      const answers = await Promise.all(asked.map((search) => mirror.search(search, [])));
      for (const answer of answers) expect(answer.total).toBe(expected);
      expect(answers.map((a) => a.items.length)).toEqual(asked.map(({ page }) => Math.max(0, Math.min(3, expected - (page - 1) * 3))));
      expect(statements.map((q) => q.sql).filter((text) => text.includes('count(*)')).length).toBe(1);
    } finally {
      await db.destroy();
    }
  });

  it('a crawl that finds every listing as stored leaves the data version as it was, and the ladders answer on', async () => {
    const ladders = t.rt.mirror.searcher.priceLadders;
    await waitForLadders(t.rt.mirror.searcher.priceLadders);
    const version = await t.rt.listings.dataVersion();
    const writes = t.rt.listings.version;
    // The local upstream's market is still (MARKET_CLOCK off): Queens' rentals are as the template stored them.
    const report = await t.rt.syncer.syncScope('rental', 300);
    expect(t.rt.listings.version).toBeGreaterThan(writes); // the crawl did write (the times the listings were seen)
    expect(report).toMatchObject({ inserted: 0, priceChanges: 0, delisted: 0 });
    expect(await t.rt.listings.dataVersion()).toBe(version);
    // Asked at once after this process's write, the ladders read the data version again, find it unchanged, and answer.
    expect(await ladders.total(everyListing('rental'))).toBe(rentals.length);
  });

  it('rebuilt in chunks of any size, a query per turn of the event loop when slices are 0 ms, the ladders count as the source rows do', async () => {
    // The turn of the event loop each read of a rebuild starts in: every read must start in a later one
    // than the read before, so that requests are answered between them (on SQLite a query holds the thread).
    const { observed, reads, stop } = readsByTurn(t.rt.listings);
    try {
      // Chunks of 2 are often all one price (rents repeat); of 7, often cut inside a run of equal rents; of 500, some areas fit one.
      for (const chunkRows of [2, 7, 500]) {
        reads.length = 0;
        const ladders = new PriceLadders(observed, 60, chunkRows, 0);
        await waitForLadders(ladders, `the price ladders built in chunks of ${chunkRows}`);
        expect(await ladders.total(everyListing('sale'))).toBe(sales.length);
        await fc.assert(
          fc.asyncProperty(fc.option(fc.constantFrom(...RENTS), { nil: undefined }), fc.option(fc.constantFrom(...RENTS), { nil: undefined }), fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }), async (low, high, minBeds) => {
            const search = { ...everyListing('rental'), minPrice: low, maxPrice: high, minBeds };
            expect(await ladders.total(search), JSON.stringify(search)).toBe(rentalsMatching(search));
          }),
          { numRuns: 30, seed: 2016 },
        );
        expect(reads.length).toBeGreaterThan(2);
        for (let i = 1; i < reads.length; i++) expect(reads[i], `read ${i} of a build in chunks of ${chunkRows}`).toBeGreaterThan(reads[i - 1]);
      }
    } finally {
      stop();
    }
  });
  it('a rebuild reads for a slice of time before it gives the event loop a turn, and current() waits for it', async () => {
    const { observed, reads, stop } = readsByTurn(t.rt.listings);
    try {
      // A slice of an hour: no read of this small mirror gives a turn, so every read shares the first one.
      const ladders = new PriceLadders(observed, 60, 7, 3_600_000);
      expect(await ladders.total(everyListing('rental')), 'not built before anything asks').toBeUndefined();
      await ladders.current();
      expect(reads.length).toBeGreaterThan(2);
      expect(new Set(reads).size, `turns of ${reads.length} reads`).toBe(1);
      // current() built them: they answer now, as the source rows count.
      expect(await ladders.total(everyListing('rental'))).toBe(rentals.length);
      expect(await ladders.total(everyListing('sale'))).toBe(sales.length);
      const readsBefore = reads.length;
      await ladders.current();
      expect(reads.length, 'current ladders are not read again').toBe(readsBefore);
    } finally {
      stop();
    }
  });
});

describe('where a page\'s matches sit in the order (the price ladders\' walk estimate)', () => {
  /** The active rentals as stored, with what places them in each order. */
  const stored = async () =>
    (await t.rt.store.db.selectFrom('listings').select(['id', 'area_id', 'price', 'bedroom_count', 'recommended_score', 'listed_at']).where('kind', '=', 'rental').where('status', '=', 'ACTIVE').execute()).map((r) => ({ ...r, price: Number(r.price), recommended_score: Number(r.recommended_score) }));

  it('by price: the rentals between the price bound the walk starts at and the page\'s last match, as the stored rows have them', async () => {
    const ladders = t.rt.mirror.searcher.priceLadders;
    await waitForLadders(ladders);
    const rows = await stored();
    const tree = await t.rt.mirror.areaTree();
    const bound = fc.option(fc.constantFrom(...RENTS), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(fc.option(fc.constantFrom(...BOROUGHS.map(([id]) => id)), { nil: undefined }), bound, bound, fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }), fc.constantFrom('ASC', 'DESC'), fc.integer({ min: 1, max: 4 }), async (borough, low, high, minBeds, sortDir, page) => {
        const [minPrice, maxPrice] = low !== undefined && high !== undefined && low > high ? [high, low] : [low, high];
        const areaIds = borough === undefined ? undefined : [...tree.withDescendants(borough)];
        const search: ListingSearch = { kind: 'rental', areaIds, minPrice, maxPrice, minBeds, sort: 'PRICE', sortDir, page, perPage: 20 };
        const inBounds = (price: number) => (minPrice === undefined || price >= minPrice) && (maxPrice === undefined || price <= maxPrice);
        const matches = rows
          .filter((r) => inBounds(r.price) && (!areaIds || areaIds.includes(r.area_id!)) && (minBeds === undefined || (r.bedroom_count !== null && r.bedroom_count >= minBeds)))
          .map((r) => r.price)
          .sort((a, b) => (sortDir === 'ASC' ? a - b : b - a));
        const estimate = await ladders.walkEstimate(search, matches.length);
        const last = matches[page * 20 - 1];
        // The walk passes its whole range when the page is the last or past it.
        const passed = rows.filter((r) => inBounds(r.price) && (last === undefined || (sortDir === 'ASC' ? r.price <= last : r.price >= last))).length;
        expect(estimate?.(), JSON.stringify(search)).toBe(passed);
      }),
      { numRuns: 60, seed: 2016 },
    );
  });

  it('in the default order: within the stored rentals of the score the page\'s last match has, for any borough and page', async () => {
    const ladders = t.rt.mirror.searcher.priceLadders;
    await waitForLadders(ladders);
    const rows = await stored();
    const tree = await t.rt.mirror.areaTree();
    // The default order: score, then listing date (unknown last), then id, all highest first.
    const order = [...rows].sort((a, b) => b.recommended_score - a.recommended_score || (b.listed_at ?? '').localeCompare(a.listed_at ?? '') || b.id.localeCompare(a.id));
    for (const [borough] of BOROUGHS) {
      const areaIds = [...tree.withDescendants(borough)];
      const positions = order.flatMap((r, i) => (areaIds.includes(r.area_id!) ? [i + 1] : []));
      for (const page of [1, 3, 10]) {
        const search: ListingSearch = { kind: 'rental', areaIds, sort: 'RECOMMENDED', sortDir: 'DESC', page, perPage: 20 };
        const estimate = (await ladders.walkEstimate(search, positions.length))!();
        const at = positions[page * 20 - 1];
        if (at === undefined) {
          expect(estimate, `${borough} page ${page}: the walk passes every rental`).toBe(rows.length);
          continue;
        }
        const score = order[at - 1].recommended_score;
        const tied = rows.filter((r) => r.recommended_score === score).length;
        expect(Math.abs(estimate - at), `${borough} page ${page}: estimate ${estimate}, the match at ${at}, ${tied} rentals of score ${score}`).toBeLessThanOrEqual(tied);
      }
    }
    // The kind's listings, which the planner weighs an even spread by.
    expect(await ladders.activeOfKind('rental')).toBe(rows.length);
    // Not for keyset pages or the orders the ladders do not hold.
    expect(await ladders.walkEstimate({ ...everyListing('rental'), after: { keys: [50, null], id: '1' } }, rows.length)).toBeUndefined();
    expect(await ladders.walkEstimate({ ...everyListing('rental'), sort: 'LISTED_AT' }, rows.length)).toBeUndefined();
    expect(await ladders.walkEstimate({ ...everyListing('rental'), noFee: true }, rows.length)).toBeUndefined();
  });
});

/**
 * The listings repository with the reads of a ladder rebuild (`activeAreas`, `activePrices`) noted by
 * the turn of the event loop each starts in (`reads`), counted by a `setImmediate` loop until `stop()`.
 */
function readsByTurn(listings: ListingsRepository): { observed: ListingsRepository; reads: number[]; stop: () => void } {
  let turn = 0;
  let spinning = true;
  const spin = () => {
    turn++;
    if (spinning) setImmediate(spin);
  };
  setImmediate(spin);
  const reads: number[] = [];
  const observed = new Proxy(listings, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (key === 'activeAreas' || key === 'activePrices') {
        return (...args: unknown[]) => {
          reads.push(turn);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ListingsRepository;
  return { observed, reads, stop: () => (spinning = false) };
}

/** A mirror over its own SQLite connection whose statements are logged (`statements`), reading `clock`; the rest is the runtime's. Destroy `db` after. */
function loggedMirror(clock: () => Date = () => new Date()) {
  const { db, statements } = sqliteWithLog<Schema>(new Database(t.rt.config.databaseUrl));
  const mirror = new Mirror({
    db,
    dialect: 'sqlite',
    listings: t.rt.listings,
    areas: new AreasRepository(db),
    buildings: new BuildingsRepository(db),
    scopes: t.rt.scopes,
    market: new MarketRepository(db),
    refresher: t.rt.syncer,
    coordinator: t.rt.coordinator,
    scopeFreshness: new ScopeFreshness({ scopes: t.rt.scopes, coordinator: t.rt.coordinator, readCacheSeconds: t.rt.config.readCacheSeconds, clock: () => new Date() }),
    config: t.rt.config,
    clock,
  });
  return { db, statements, mirror };
}
