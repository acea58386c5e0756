import { describe, expect, it } from 'vitest';
import { get } from '../helpers/http.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// The first sync of an empty mirror in the background (issue 67, src/sync/first-sync.ts): the service answers from the
// first moment; a scope not yet synced answers what the mirror holds with `source: refreshing`, one synced answers
// from the mirror as any other; then the details are hydrated.
const runtime = useRuntimesPerTest({ withoutRentHop: true, fresh: true, initialSync: 'background' });

const count = async (rt: Awaited<ReturnType<typeof runtime>>, kind: string, boroughId: number) =>
  Number(
    (
      await rt.store.db
        .selectFrom('listings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('kind', '=', kind)
        .where('borough_id', '=', boroughId)
        .where('status', '=', 'ACTIVE')
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('a first start', () => {
  it('answers at once: refreshing for a scope not synced yet, from the mirror once it is, then hydrates the details', async () => {
    // Each upstream request a tenth of a second late: the first sync takes seconds, Manhattan's rentals (last) longest.
    const rt = await runtime({ LOCAL_UPSTREAM_FAULTS: 'latencyMs=100' });
    expect(rt.firstSync).not.toBeNull();
    const key = await rt.key('business'); // anonymous searches are limited per address: the waits below poll
    const early = await get(rt.app, '/v1/search/rentals?areas=100&perPage=5', key);
    expect(early.status).toBe(200);
    expect(rt.firstSync!.state().done).toBe(false);
    expect(early.body.meta).toMatchObject({ source: 'refreshing', refreshTriggered: false });
    expect(early.body.meta.total).toBe(await count(rt, 'rental', 100));
    // Sales come first: once Manhattan's are in, they answer from the mirror while the rentals still come.
    await waitFor(
      async () => (await get(rt.app, '/v1/search/sales?areas=100&perPage=5', key)).body.meta.source === 'cached',
      "Manhattan's sales synced",
      120_000,
    );
    const sales = await get(rt.app, '/v1/search/sales?areas=100&perPage=5', key);
    expect(sales.body.meta.total).toBe(await count(rt, 'sale', 100));
    expect(sales.body.meta.total).toBeGreaterThan(0);
    expect((await get(rt.app, '/v1/search/rentals?areas=100&perPage=5', key)).body.meta.source).toBe('refreshing');
    // The latency was for the scopes' turns, seen above; the other scopes and the details come as fast as the emulator answers.
    rt.upstream!.faults.latencyMs = 0;
    await rt.firstSync!.done;
    expect(rt.firstSync!.state()).toMatchObject({ synced: 10, scopes: 10, failed: [], done: true });
    const late = await get(rt.app, '/v1/search/rentals?areas=100&perPage=5', key);
    expect(late.body.meta.source).toBe('cached');
    expect(late.body.meta.total).toBe(await count(rt, 'rental', 100));
    expect(late.body.meta.total).toBeGreaterThan(0);
    await waitFor(async () => (await rt.syncer.backlog()) === 0 && !rt.syncer.hydrationProgress().running, 'the details hydrated', 180_000);
  }, 300_000);
});
