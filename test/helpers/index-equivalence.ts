import fc from 'fast-check';
import { expect } from 'vitest';
import { LISTING_KINDS, KNOWN_AMENITIES, KNOWN_BUILDING_TYPES, SALE_TYPES, type ListingKind } from '../../src/domain/listing.js';
import { mortgageFactor } from '../../src/domain/monthly-cost.js';
import type { Outline } from '../../src/domain/outline.js';
import { distanceMeters } from '../../src/domain/great-circle.js';
import type { ListingSearch, SearchAfter, SearchContext } from '../../src/search/listing-search.js';
import { clusterGrid } from '../../src/search/clusters.js';
import { Searcher } from '../../src/search/searcher.js';
import { REBUILD_AFTER } from '../../src/search/search-index.js';
import { INDEXED_SORTS, SORTS, type IndexedSort } from '../../src/search/sorts.js';
import type { TestRuntime } from './runtime.js';

/** An active listing's searched values, read from the store by the test, to draw filter bounds that fall on real values. */
interface Sample {
  id: string;
  kind: ListingKind;
  area_id: number | null;
  price: number;
  bedroom_count: number | null;
  full_bathroom_count: number | null;
  sqft: number | null;
  transit_score: number | null;
  price_position: number | null;
  recommended_score: number;
  price_per_sqft: number | null;
  listed_at: string | null;
  available_at: string | null;
  latitude: number | null;
  longitude: number | null;
  community_district: number | null;
  police_precinct: number | null;
  school_district: number | null;
  monthly_charges: number;
}

/** A box around the five boroughs, for the clusters of a search that has none. */
const CITY: [number, number, number, number] = [-74.3, 40.45, -73.65, 40.95];

/** `arbitrary`'s value in about `share` of the draws, undefined in the others. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, share: number) =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: Math.round((1 - share) * 100) }, { arbitrary, weight: Math.round(share * 100) });

/**
 * Searches drawn from the store's own listings: bounds on prices, sizes, dates and positions that some listing
 * has exactly (where a strict and a loose comparison part), areas and districts that hold listings, any order and
 * page, and keyset positions at a listing's keys (its id, or one just after it, which no listing has).
 */
function searches(samples: Sample[], now: Date): fc.Arbitrary<{ search: ListingSearch; polygon?: Outline; zoom: number }> {
  const sample = fc.constantFrom(...samples);
  const some = <T>(values: T[]) => fc.constantFrom(...values);
  const known = <K extends keyof Sample>(key: K) =>
    [...new Set(samples.map((s) => s[key]).filter((v) => v !== null))] as NonNullable<Sample[K]>[];
  const [prices, beds, baths, sqfts, scores, listed, available, areas] = [
    known('price'),
    known('bedroom_count'),
    known('full_bathroom_count'),
    known('sqft'),
    known('transit_score'),
    known('listed_at'),
    known('available_at'),
    known('area_id'),
  ];
  const days = fc.integer({ min: 0, max: 400 });
  const flag = fc.boolean();
  const box = fc.tuple(sample, sample).map(([a, b]) => {
    const [lon, lat] = [
      [a.longitude ?? -74, b.longitude ?? -73.9].sort((x, y) => x - y),
      [a.latitude ?? 40.7, b.latitude ?? 40.8].sort((x, y) => x - y),
    ];
    return [lon[0], lat[0], lon[1], lat[1]] as [number, number, number, number];
  });
  // A triangle with listings at its corners: they sit on its edge.
  const polygon = fc.tuple(sample, sample, sample).map(([a, b, c]): Outline => {
    const corner = (s: Sample) => [s.longitude ?? -73.95, s.latitude ?? 40.75];
    return { type: 'Polygon', coordinates: [[corner(a), corner(b), corner(c), corner(a)]] };
  });
  const every = {
    areaIds: fc.uniqueArray(fc.constantFrom(...areas), { minLength: 1, maxLength: 6 }),
    minPrice: some(prices),
    maxPrice: some(prices),
    minBeds: some(beds),
    maxBeds: some(beds),
    minBaths: fc.constantFrom(...baths),
    maxBaths: fc.constantFrom(...baths),
    minSqft: fc.constantFrom(...sqfts),
    maxSqft: fc.constantFrom(...sqfts),
    amenities: fc.uniqueArray(fc.constantFrom(...KNOWN_AMENITIES, 'SAUNA'), { minLength: 1, maxLength: 2 }),
    petsAllowed: flag,
    has3dTour: flag,
    noFee: flag,
    furnished: flag,
    buildingTypes: fc.uniqueArray(fc.constantFrom(...KNOWN_BUILDING_TYPES, 'CASTLE'), { minLength: 1, maxLength: 2 }),
    prewar: flag,
    minDaysOnMarket: days,
    maxDaysOnMarket: days,
    listedAfter: fc.constantFrom(...listed),
    listedBefore: fc.constantFrom(...listed),
    hasOpenHouse: fc.boolean(),
    maxMonthlyCost: fc.integer({ min: 500, max: 30_000 }),
    minTransitScore: fc.constantFrom(...scores),
    maxPricePosition: fc.constantFrom(...known('price_position'), -5, 0),
    availableBefore: fc.constantFrom(...available, now.toISOString().slice(0, 10)),
    communityDistrict: fc.uniqueArray(fc.constantFrom(...known('community_district')), { minLength: 1, maxLength: 3 }),
    policePrecinct: fc.uniqueArray(fc.constantFrom(...known('police_precinct')), { minLength: 1, maxLength: 3 }),
    schoolDistrict: fc.uniqueArray(fc.constantFrom(...known('school_district')), { minLength: 1, maxLength: 3 }),
    bbox: box,
    // A circle around a listing through another (its radius that listing's distance, rounded to the metre, as the filter rounds it).
    near: fc.tuple(sample, sample).map(([a, b]) => {
      const centre = { latitude: a.latitude ?? 40.75, longitude: a.longitude ?? -73.98 };
      const through = { latitude: b.latitude ?? 40.76, longitude: b.longitude ?? -73.97 };
      return { ...centre, radius: Math.min(50_000, Math.max(1, Math.round(distanceMeters(centre, through)))) };
    }),
    // Both bounds of one range, as an app sends them (the index makes them one pass, or a range of rows for the price).
    priceRange: fc.tuple(some(prices), some(prices)).map(([a, b]) => ({ minPrice: Math.min(a, b), maxPrice: Math.max(a, b) })),
    bedsRange: fc.tuple(some(beds), some(beds)).map(([a, b]) => ({ minBeds: Math.min(a, b), maxBeds: Math.max(a, b) })),
  };
  // A few filters a search, as an app sends: all of them at once would match nothing.
  const filters = fc.subarray(Object.keys(every) as (keyof typeof every)[], { maxLength: 4 }).chain((names) =>
    fc.record(Object.fromEntries(names.map((name) => [name, every[name]])) as { [K in keyof typeof every]: (typeof every)[K] }, {
      requiredKeys: [],
    }),
  );
  return fc
    .record({
      kind: fc.constantFrom(...LISTING_KINDS),
      saleType: sometimes(fc.constantFrom(...SALE_TYPES), 1 / 4),
      filters,
      sort: fc.constantFrom(...INDEXED_SORTS),
      sortDir: fc.constantFrom('ASC' as const, 'DESC' as const),
      page: fc.integer({ min: 1, max: 6 }),
      zoom: fc.integer({ min: 10, max: 16 }),
      perPage: fc.constantFrom(1, 5, 20, 50, 500),
      after: sometimes(fc.tuple(sample, fc.boolean()), 1 / 4),
      polygon: sometimes(polygon, 1 / 8),
    })
    .map(({ kind, saleType, filters, sort, sortDir, page, perPage, after, polygon, zoom }) => {
      const { priceRange, bedsRange, ...single } = filters;
      const drawn: Record<string, unknown> = {
        ...single,
        ...priceRange,
        ...bedsRange,
        kind,
        sort,
        sortDir,
        page,
        perPage,
        ...(kind === 'sale' && saleType ? { saleType } : {}),
        ...(after ? { after: afterOf(after[0], sort, after[1]) } : {}),
      };
      // A filter drawn as absent is left out, as the route leaves out a parameter not given.
      const search = Object.fromEntries(Object.entries(drawn).filter(([, value]) => value !== undefined)) as ListingSearch;
      return { search, polygon, zoom };
    });
}

/** A keyset position at `listing`'s keys in `sort`: its own id, or (`past`) an id just after it that no listing has. */
function afterOf(listing: Sample, sort: IndexedSort, past: boolean): SearchAfter {
  return { keys: SORTS[sort].keyset.map(({ column }) => listing[column] ?? null), id: past ? `${listing.id}~` : listing.id };
}

/**
 * Checks, over `runs` drawn searches on `rt`'s store, that the search index gives exactly the ids, in order,
 * and the total of the plain SQL path (a searcher without the index, on the same store and clock), and that
 * the searcher answers with the same rows and cursor either way. With `writes`, the index is built, `writes` run, and
 * the searches drawn from the store as they left it are asked of the index brought to the store's version (with a delta);
 * `delta` is then how many listings the delta holds.
 */
export async function checkIndexAnswersAsStore(
  rt: TestRuntime,
  runs: number,
  writes?: () => Promise<void>,
): Promise<{ searches: number; fromIndex: number; matched: number; delta: number }> {
  const index = rt.reads.searcher.index;
  if (!index) throw new Error('the runtime has no search index (SEARCH_INDEX off)');
  const now = new Date();
  const deps = {
    db: rt.store.readDb,
    dialect: rt.store.dialect,
    listings: rt.listings,
    mortgage: rt.config.mortgage,
    readCacheSeconds: rt.config.readCacheSeconds,
    clock: () => now,
    warn: () => undefined,
  };
  const plain = new Searcher({ ...deps, searchIndex: false });
  const indexed = new Searcher({ ...deps, searchIndex: true });
  await indexed.index!.current();
  if (writes) {
    await writes();
    await indexed.index!.current();
  }
  const samples = (await rt.store.db
    .selectFrom('listings')
    .select([
      'id',
      'kind',
      'area_id',
      'price',
      'bedroom_count',
      'full_bathroom_count',
      'sqft',
      'transit_score',
      'price_position',
      'recommended_score',
      'price_per_sqft',
      'listed_at',
      'available_at',
      'latitude',
      'longitude',
      'community_district',
      'police_precinct',
      'school_district',
      'monthly_charges',
    ])
    .where('status', '=', 'ACTIVE')
    .execute()) as Sample[];
  const ctx: SearchContext = { now, mortgageFactor: mortgageFactor(rt.config.mortgage), dialect: rt.store.dialect };
  const tally = { searches: 0, fromIndex: 0, matched: 0, delta: indexed.index!.state().deltaListings };
  await fc.assert(
    fc.asyncProperty(searches(samples, now), async ({ search, polygon, zoom }) => {
      const fromIndex = await indexed.index!.find(search, ctx, polygon);
      expect(fromIndex, 'the index answers every search sorted by an order it holds').toBeDefined();
      const [expected, actual] = [await plain.find(search, polygon), await indexed.find(search, polygon)];
      expect({ ids: fromIndex!.rows.map((r) => r.id), total: fromIndex!.total }).toEqual({
        ids: expected.rows.map((r) => r.id),
        total: expected.total,
      });
      expect(actual).toEqual(expected);
      // The map's clusters of the same search, in the box it has or the whole city's: the same cells, counts and
      // price ranges; centroids summed in another order may differ in their last digit (a millionth of a degree).
      const box = search.bbox ?? CITY;
      const withBox = { ...search, bbox: box };
      const grid = clusterGrid(zoom, box);
      const cells = await indexed.index!.clusters(withBox, ctx, grid, polygon);
      const stored = await plain.clusters(withBox, grid, polygon);
      expect(cells).toHaveLength(stored.length);
      cells!.forEach((cell, i) => {
        expect({ ...cell, latitude: 0, longitude: 0 }).toEqual({ ...stored[i], latitude: 0, longitude: 0 });
        expect(Math.abs(cell.latitude - stored[i].latitude)).toBeLessThanOrEqual(1.5e-6);
        expect(Math.abs(cell.longitude - stored[i].longitude)).toBeLessThanOrEqual(1.5e-6);
      });
      tally.searches++;
      tally.fromIndex++;
      if (expected.total > 0) tally.matched++;
    }),
    { numRuns: runs },
  );
  return tally;
}

/**
 * {@link checkIndexAnswersAsStore} on an index with a delta after `writer` (a runtime on `rt`'s store with a market clock of
 * its own, or `rt` itself) moved its market two days and synced: its crawls, hydration and valuation write through the
 * real writers. Checks that the sync wrote listings, few enough to be held as a delta without a build (REBUILD_AFTER), and that most drawn searches found some.
 */
export async function checkIndexWithDeltaAnswersAsStore(
  rt: TestRuntime,
  writer: TestRuntime,
  runs: number,
): Promise<{ searches: number; matched: number; delta: number }> {
  const tally = await checkIndexAnswersAsStore(rt, runs, async () => {
    writer.marketClock!.advance(2 * 24 * 3_600_000);
    expect(await writer.syncer.syncAll()).toEqual([]);
    // The index takes the sync's listings as a delta before the valuation writes again: the searches then run on a
    // delta merged from two reads, as a sync's batches make it.
    await rt.reads.searcher.index?.current();
    await writer.valuation.run();
  });
  expect(tally.delta).toBeGreaterThan(0);
  expect(tally.delta).toBeLessThanOrEqual(REBUILD_AFTER);
  expect(tally.matched).toBeGreaterThan(tally.searches / 4);
  return tally;
}
