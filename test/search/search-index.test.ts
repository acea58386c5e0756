import { describe, expect, it } from 'vitest';
import { drawnRuns } from '../helpers/drawn-runs.js';
import { mortgageFactor } from '../../src/domain/monthly-cost.js';
import { bulkVersionBump, dataVersionBump, nextDataVersion } from '../../src/store/data-version.js';
import { get } from '../helpers/http.js';
import { checkIndexAnswersAsStore, checkIndexWithDeltaAnswersAsStore } from '../helpers/index-equivalence.js';
import { startTestRuntime, useTestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// The search index against the plain SQL path on the embedded SQLite (test/store/postgres.test.ts runs the same on
// PostgreSQL): the same ids, order, totals, rows and cursors for every drawn search. The store's version is read
// again on every search (READ_CACHE_SECONDS 0), as another instance's write would be after READ_CACHE_SECONDS.
const t = useTestRuntime('pro', { READ_CACHE_SECONDS: '0', ANSWER_CACHE_MB: '0' });

describe('the search index', () => {
  it('gives exactly the ids, order and total of the plain SQL path, for drawn filters, sorts, pages and keyset positions', async () => {
    const tally = await checkIndexAnswersAsStore(t.rt, drawnRuns(100, 'INDEX_EQUIVALENCE_RUNS'));
    console.log(`search index (SQLite): ${tally.searches} searches, ${tally.matched} with matches`);
    // Not a test of nothing: most drawn searches find listings.
    expect(tally.matched).toBeGreaterThan(tally.searches / 4);
    // The store's side of each comparison is the plain SQL path, whole-city sorts among them: minutes on a busy machine.
  }, 300_000);

  it('after a sync that moved the market, with a delta of the listings it wrote, gives exactly what the plain SQL path gives', async () => {
    // A runtime of its own: the market moves, and the sync's crawls, hydration and valuation write through the real writers.
    const rt = await startTestRuntime({ READ_CACHE_SECONDS: '0', ANSWER_CACHE_MB: '0' }, { manualMarketClock: true, withoutRentHop: true });
    try {
      const tally = await checkIndexWithDeltaAnswersAsStore(rt, rt, drawnRuns(100, 'INDEX_EQUIVALENCE_RUNS') / 2);
      console.log(
        `search index with a delta (SQLite): ${tally.delta} listings written, ${tally.searches} searches, ${tally.matched} with matches`,
      );
    } finally {
      await rt.close();
    }
  }, 300_000);

  it('shows in /v1/health what it holds; a listing another instance writes is added as a delta at once, and a bulk load builds it again', async () => {
    const { rt, key } = t;
    const index = rt.reads.searcher.index!;
    await index.current();
    const counts = await rt.store.db
      .selectFrom('listings')
      .select(['kind', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', '=', 'ACTIVE')
      .groupBy('kind')
      .execute();
    const health = (await get(rt.app, '/v1/health')).body.searchIndex;
    expect(health).toMatchObject({
      enabled: true,
      listings: Object.fromEntries(counts.map((c) => [c.kind, Number(c.n)])),
      dataVersion: await rt.listings.dataVersion(),
      failedBuilds: 0,
      lastError: null,
    });
    // Another instance's write, as its writers make it: a rental's price changed and its row stamped with the version
    // the transaction moves to; another rental taken off the market.
    const [changed, delisted] = await rt.store.db
      .selectFrom('listings')
      .select('id')
      .where('kind', '=', 'rental')
      .where('status', '=', 'ACTIVE')
      .orderBy('id')
      .limit(2)
      .execute();
    const price = 987_654;
    await rt.store.db.transaction().execute(async (trx) => {
      const version = await nextDataVersion(trx);
      await trx.updateTable('listings').set({ price, data_version: version }).where('id', '=', changed.id).execute();
      await trx.updateTable('listings').set({ status: 'OFF_MARKET', data_version: version }).where('id', '=', delisted.id).execute();
      await dataVersionBump(trx).execute();
    });
    const search = `/v1/search/rentals?minPrice=${price}&maxPrice=${price}`;
    expect((await get(rt.app, search, key)).body.data.map((l: { id: string }) => l.id)).toEqual([changed.id]);
    // Answered by the index, with a delta of the two rows written: no build.
    const ctx = { now: new Date(), mortgageFactor: mortgageFactor(rt.config.mortgage), dialect: rt.store.dialect };
    const page = await index.find(
      { kind: 'rental', minPrice: price, maxPrice: price, sort: 'RECOMMENDED', sortDir: 'DESC', page: 1, perPage: 50 },
      ctx,
    );
    expect(page!.rows.map((row) => [row.id, row.price])).toEqual([[changed.id, price]]);
    const withDelta = (await get(rt.app, '/v1/health')).body.searchIndex;
    expect(withDelta).toMatchObject({
      dataVersion: health.dataVersion + 1,
      deltaListings: 2,
      builds: health.builds,
      listings: { ...health.listings, rental: health.listings.rental - 1 },
    });
    const { body: scraped } = await rt.metrics.scrape();
    expect(scraped).toMatch(/^nyc_listings_search_index_delta_listings 2$/m);
    const everyRental = `/v1/search/rentals?perPage=1`;
    expect((await get(rt.app, everyRental, key)).body.meta.total).toBe(health.listings.rental - 1);

    // A second write: the same rental again at another price, and a third rental at it. The next delta reads only
    // these rows and merges them by id into those it held: the first rental answers at its last price only.
    const [third] = await rt.store.db
      .selectFrom('listings')
      .select('id')
      .where('kind', '=', 'rental')
      .where('status', '=', 'ACTIVE')
      .where('id', '>', delisted.id)
      .orderBy('id')
      .limit(1)
      .execute();
    const secondPrice = 876_543;
    await rt.store.db.transaction().execute(async (trx) => {
      const version = await nextDataVersion(trx);
      await trx
        .updateTable('listings')
        .set({ price: secondPrice, data_version: version })
        .where('id', 'in', [changed.id, third.id])
        .execute();
      await dataVersionBump(trx).execute();
    });
    const ids = async (path: string) => ((await get(rt.app, path, key)).body.data as { id: string }[]).map((l) => l.id).sort();
    expect(await ids(search)).toEqual([]);
    expect(await ids(`/v1/search/rentals?minPrice=${secondPrice}&maxPrice=${secondPrice}`)).toEqual([changed.id, third.id].sort());
    expect((await get(rt.app, '/v1/health')).body.searchIndex).toMatchObject({
      dataVersion: health.dataVersion + 2,
      deltaListings: 3,
      builds: health.builds,
    });
    expect((await get(rt.app, everyRental, key)).body.meta.total).toBe(health.listings.rental - 1);

    // A bulk write (the synthetic listings' load or removal) carries no row versions: the index is built again.
    await rt.store.db.transaction().execute(async (trx) => {
      await bulkVersionBump(trx).execute();
      await dataVersionBump(trx).execute();
    });
    expect(await ids(`/v1/search/rentals?minPrice=${secondPrice}&maxPrice=${secondPrice}`)).toEqual([changed.id, third.id].sort());
    await waitFor(() => index.state().builds === health.builds + 1 && !index.state().building, 'the index built again');
    expect((await get(rt.app, '/v1/health')).body.searchIndex).toMatchObject({ dataVersion: health.dataVersion + 3, deltaListings: 0 });
    expect((await get(rt.app, everyRental, key)).body.meta.total).toBe(health.listings.rental - 1);
  });
});
