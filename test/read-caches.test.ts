import { describe, expect, it } from 'vitest';
import { get } from './helpers/http.js';
import { useRuntimesPerTest } from './helpers/runtime.js';
import { waitFor } from './helpers/wait.js';

// The read caches (README "Read caches"): a write in this process shows at once, one by another
// instance on the same database within READ_CACHE_SECONDS.
const runtime = useRuntimesPerTest();
const DAY = 24 * 3_600_000;

describe('read caches', () => {
  it('a sync here shows in the next search at once; a sync by another instance within READ_CACHE_SECONDS', async () => {
    let now = Date.now();
    const a = await runtime({ READ_CACHE_SECONDS: '0.5' }, { clock: () => new Date(now), manualMarketClock: true });
    const b = await runtime({ DATABASE_URL: a.config.databaseUrl, READ_CACHE_SECONDS: '0.5' }, { initialSync: false, webhooks: false, clock: () => new Date(now), manualMarketClock: true });
    const key = await a.key('pro');
    const url = '/v1/search/rentals?areas=100&perPage=5';
    const stored = async () =>
      Number((await a.store.db.selectFrom('listings').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', 'rental').where('status', '=', 'ACTIVE').where('borough_id', '=', 100).executeTakeFirstOrThrow()).n);
    expect((await get(a.app, url, key)).body.meta.total).toBe(await stored());

    // This instance's own sync: the very next answer has the new total.
    a.marketClock!.advance(DAY);
    now += DAY;
    await a.syncer.syncScope('rental', 100);
    expect((await get(a.app, url, key)).body.meta.total).toBe(await stored());

    // Another instance's sync on the same database: seen once the cached answer has expired.
    const before = (await get(a.app, url, key)).body.meta.total;
    b.marketClock!.advance(3 * DAY);
    now += DAY;
    await b.syncer.syncScope('rental', 100);
    const after = await stored();
    expect(after).not.toBe(before);
    await waitFor(async () => (await get(a.app, url, key)).body.meta.total === after, 'the other instance\'s sync in this instance\'s answers');
  }, 120_000);
});
