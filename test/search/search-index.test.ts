import { describe, expect, it } from 'vitest';
import { mortgageFactor } from '../../src/domain/monthly-cost.js';
import { dataVersionBump } from '../../src/store/data-version.js';
import { get } from '../helpers/http.js';
import { checkIndexAnswersAsStore } from '../helpers/index-equivalence.js';
import { useTestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// The search index against the plain SQL path on the embedded SQLite (test/store/postgres.test.ts runs the same on
// PostgreSQL): the same ids, order, totals, rows and cursors for every drawn search. The store's version is read
// again on every search (READ_CACHE_SECONDS 0), as another instance's write would be after READ_CACHE_SECONDS.
const t = useTestRuntime('pro', { READ_CACHE_SECONDS: '0', ANSWER_CACHE_MB: '0' });

describe('the search index', () => {
  it('gives exactly the ids, order and total of the plain SQL path, for drawn filters, sorts, pages and keyset positions', async () => {
    const tally = await checkIndexAnswersAsStore(t.rt, Number(process.env.INDEX_EQUIVALENCE_RUNS ?? 250));
    console.log(`search index (SQLite): ${tally.searches} searches, ${tally.matched} with matches`);
    // Not a test of nothing: most drawn searches find listings.
    expect(tally.matched).toBeGreaterThan(tally.searches / 4);
    // The store's side of each comparison is the plain SQL path, whole-city sorts among them: minutes on a busy machine.
  }, 300_000);

  it('shows in /v1/health what it holds; a write to the store is answered at once by the store, then by the index built again', async () => {
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
    // Another instance's write: a rental's price changed in the store, its data version moved.
    const { id } = await rt.store.db
      .selectFrom('listings')
      .select('id')
      .where('kind', '=', 'rental')
      .where('status', '=', 'ACTIVE')
      .orderBy('id')
      .limit(1)
      .executeTakeFirstOrThrow();
    const price = 987_654;
    await rt.store.db.transaction().execute(async (trx) => {
      await trx.updateTable('listings').set({ price }).where('id', '=', id).execute();
      await dataVersionBump(trx).execute();
    });
    const search = `/v1/search/rentals?minPrice=${price}&maxPrice=${price}`;
    const answer = await get(rt.app, search, key);
    expect(answer.body.data.map((l: { id: string }) => l.id)).toEqual([id]);
    expect(answer.body.meta.total).toBe(1);
    await waitFor(
      () => index.state().dataVersion === health.dataVersion + 1 && !index.state().building,
      'the index built again at the new version',
    );
    const ctx = { now: new Date(), mortgageFactor: mortgageFactor(rt.config.mortgage), dialect: rt.store.dialect };
    const page = await index.find(
      { kind: 'rental', minPrice: price, maxPrice: price, sort: 'RECOMMENDED', sortDir: 'DESC', page: 1, perPage: 50 },
      ctx,
    );
    // The page's row comes from the index, with the price written.
    expect(page!.total).toBe(1);
    expect(page!.rows.map((row) => [row.id, row.price])).toEqual([[id, price]]);
    expect((await get(rt.app, search, key)).body.data.map((l: { id: string }) => l.id)).toEqual([id]);
    expect((await get(rt.app, '/v1/health')).body.searchIndex.builds).toBe(health.builds + 1);
  });
});
