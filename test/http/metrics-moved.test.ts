import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { addSubscription } from '../../src/notify/webhook-admin.js';
import { startReceiver } from '../helpers/receiver.js';
import { useRuntimesPerTest, type TestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// Each metric of docs/operations.md moved by a known amount (issue 66), for those test/http/metrics.test.ts and the
// tests of their own parts do not move: the search index's, the upstream queue and circuit, hydration's running
// flag and count, the valuation's, and webhook delivery's. Read as a scrape reads them (Metrics.scrape).
const runtime = useRuntimesPerTest({ withoutRentHop: true });

/** Every sample of a scrape of `rt`'s metrics: `name{labels}` -> value. */
async function scrape(rt: TestRuntime): Promise<Map<string, number>> {
  const samples = new Map<string, number>();
  for (const line of (await rt.metrics.scrape()).body.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

const MiB = 1024 * 1024;

const count = async (rt: TestRuntime, where: string) =>
  Number((await sql<{ n: number }>`select count(*) as n from listings where ${sql.raw(where)}`.execute(rt.store.db)).rows[0].n);

describe('metrics moved by what the test does', () => {
  it("the thread's heap: used and reserved grow by what the test holds", async () => {
    const rt = await runtime();
    const heap = (samples: Map<string, number>, state: string) =>
      samples.get(`nyc_listings_thread_heap_bytes{thread="main",state="${state}"}`)!;
    // A full collection before each scrape, so that what other code left behind does not move the figures.
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    collect();
    const before = await scrape(rt);
    // 16 Mi doubles in a plain array: 128 MiB on the V8 heap itself (a typed array's bytes would be outside it).
    const held = new Array<number>(16 * MiB).fill(0.5);
    collect();
    const after = await scrape(rt);
    expect(held.length).toBe(16 * MiB);
    // The array, give or take what the first scrape left and the second allocated: well under a MiB either way.
    expect(heap(after, 'used') - heap(before, 'used')).toBeGreaterThan(127 * MiB);
    expect(heap(after, 'used') - heap(before, 'used')).toBeLessThan(130 * MiB);
    // What is reserved holds the array; by how much it grew is not known: a collection gives pages of the other
    // spaces back (a worker that had run other files reserved 30 MiB more, with 128 MiB more used).
    expect(heap(after, 'total')).toBeGreaterThanOrEqual(heap(after, 'used'));
    expect(heap(after, 'total')).toBeGreaterThan(128 * MiB);
  });

  it("the search index's: listings by kind, builds, and the build's time", async () => {
    const rt = await runtime();
    const index = rt.reads.searcher.index!;
    await index.current();
    const before = await scrape(rt);
    expect(before.get('nyc_listings_search_index_listings{kind="rental"}')).toBe(await count(rt, "kind = 'rental' and status = 'ACTIVE'"));
    expect(before.get('nyc_listings_search_index_listings{kind="sale"}')).toBe(await count(rt, "kind = 'sale' and status = 'ACTIVE'"));
    // A bulk write: the index is built again from the whole table.
    await rt.store.db
      .updateTable('data_versions')
      .set({ version: sql`version + 1` })
      .where('name', 'in', ['listings', 'listings_bulk'])
      .execute();
    // Seen within READ_CACHE_SECONDS; the build runs in the background meanwhile.
    await waitFor(async () => {
      await index.current();
      return index.state().builds === before.get('nyc_listings_search_index_builds')! + 1 && !index.state().building;
    }, 'the index built again');
    const after = await scrape(rt);
    expect(after.get('nyc_listings_search_index_builds')).toBe(before.get('nyc_listings_search_index_builds')! + 1);
    expect(after.get('nyc_listings_search_index_building')).toBe(0);
    expect(after.get('nyc_listings_search_index_failed_builds')).toBe(0);
    expect(after.get('nyc_listings_search_index_build_seconds')).toBe(index.state().buildSeconds);
    expect(after.get('nyc_listings_search_index_build_seconds')).toBeGreaterThan(0);
  });

  it('the upstream: calls queued while it holds them, and its circuit opened by failures', async () => {
    const rt = await runtime({
      UPSTREAM_CONCURRENCY: '1',
      UPSTREAM_BREAKER_THRESHOLD: '2',
      UPSTREAM_BREAKER_HALF_OPEN_SECONDS: '3600',
      UPSTREAM_MAX_ATTEMPTS: '1',
    });
    expect((await scrape(rt)).get('nyc_listings_upstream_queued_requests{upstream="listings"}')).toBe(0);
    const release = rt.upstream!.pause();
    // One crawl page in flight (held), three waiting.
    const crawls = [300, 200, 100, 400].map((borough) => rt.syncer.syncScope('rental', borough));
    await waitFor(() => rt.client.queued() === 3, 'three crawl pages queued');
    expect((await scrape(rt)).get('nyc_listings_upstream_queued_requests{upstream="listings"}')).toBe(3);
    release();
    await Promise.all(crawls);
    expect((await scrape(rt)).get('nyc_listings_upstream_circuit_state{upstream="listings"}')).toBe(0);
    rt.upstream!.faults.errorRate = 1;
    for (let i = 0; i < 2; i++) await rt.syncer.syncScope('rental', 500).catch(() => undefined);
    expect((await scrape(rt)).get('nyc_listings_upstream_circuit_state{upstream="listings"}')).toBe(2);
  });

  it('hydration: running while a run waits on the upstream, and the listings it hydrated', async () => {
    const rt = await runtime();
    const before = (await scrape(rt)).get('nyc_listings_hydrated_listings')!;
    const ids = (
      await rt.store.db.selectFrom('listings').select('id').where('kind', '=', 'rental').where('status', '=', 'ACTIVE').limit(7).execute()
    ).map((r) => r.id);
    await rt.store.db.updateTable('listings').set({ needs_detail: 1 }).where('id', 'in', ids).execute();
    const release = rt.upstream!.pause();
    rt.hydration.resume();
    await waitFor(async () => (await scrape(rt)).get('nyc_listings_hydration_running') === 1, 'the run under way');
    expect((await scrape(rt)).get('nyc_listings_hydration_backlog')).toBe(7);
    release();
    await waitFor(async () => (await scrape(rt)).get('nyc_listings_hydration_running') === 0, 'the run over');
    const after = await scrape(rt);
    expect(after.get('nyc_listings_hydrated_listings')).toBe(before + 7);
    expect(after.get('nyc_listings_hydration_backlog')).toBe(0);
  });

  it('the valuation: a run, its time, and the positions it changed', async () => {
    const rt = await runtime();
    await rt.valuation.run();
    const before = await scrape(rt);
    expect(before.get('nyc_listings_valuation_changed')).toBe(rt.valuation.state().lastChanged);
    // Five stored positions made wrong: the next run puts those five back, and changes nothing else.
    const ids = (
      await rt.store.db
        .selectFrom('listings')
        .select('id')
        .where('status', '=', 'ACTIVE')
        .where('price_position', 'is not', null)
        .limit(5)
        .execute()
    ).map((r) => r.id);
    await rt.store.db.updateTable('listings').set({ price_position: 999 }).where('id', 'in', ids).execute();
    await rt.valuation.run();
    const after = await scrape(rt);
    expect(after.get('nyc_listings_valuation_runs')).toBe(before.get('nyc_listings_valuation_runs')! + 1);
    expect(after.get('nyc_listings_valuation_changed')).toBe(5);
    expect(after.get('nyc_listings_valuation_seconds')).toBe(rt.valuation.state().lastRunSeconds);
    expect(after.get('nyc_listings_valuation_failed_runs')).toBe(0);
  });

  it('webhook delivery: the queue, its due and oldest due, then each attempt, how late it started, and dead letters', async () => {
    let now = Date.now();
    const rt = await runtime(
      { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,0.1', WEBHOOK_POLL_SECONDS: '0.05' },
      { webhooks: false, clock: () => new Date(now) },
    );
    await rt.key('business');
    const keyId = (await rt.keys.list()).at(-1)!.id;
    // One receiver fails each first attempt; the other fails every attempt.
    const flaky = await startReceiver((_path, seen) => (seen === 0 ? 503 : 204));
    const down = await startReceiver(() => 503);
    try {
      const deps = { webhooks: rt.webhooks, keys: rt.keys, changes: rt.changes, config: rt.config, clock: () => new Date(now) };
      const retried = await addSubscription(deps, { keyId, url: `${flaky.url}/hooks`, events: ['listing.price_changed'], filter: '' });
      const dead = await addSubscription(deps, { keyId, url: `${down.url}/hooks`, events: ['listing.price_changed'], filter: '' });
      // Three deliveries for each, due a minute ago, before any dispatcher runs.
      const items = [1, 2, 3].map((eventId) => ({ eventId, messageId: `msg_${eventId}`, payload: '{}' }));
      for (const s of [retried, dead]) await rt.webhooks.enqueue(s.subscription.id, items, 3, new Date(now - 60_000).toISOString());
      const queued = await scrape(rt);
      expect(queued.get('nyc_listings_webhook_queue_depth')).toBe(6);
      expect(queued.get('nyc_listings_webhook_due')).toBe(6);
      expect(queued.get('nyc_listings_webhook_oldest_due_age_seconds')).toBe(60);
      const attempts = (outcome: string, s: Map<string, number>) => s.get(`nyc_listings_webhook_attempts_total{outcome="${outcome}"}`) ?? 0;
      now = Date.now();
      rt.dispatcher.start();
      const settled = async () => (await rt.webhooks.queue(new Date(now).toISOString())).pending === 0;
      await waitFor(async () => {
        now = Date.now();
        return settled();
      }, 'every delivery delivered or dead');
      const after = await scrape(rt);
      // The flaky receiver's three: a retry each, then delivered. The other's three: a retry each, then dead.
      expect({ retry: attempts('retry', after), delivered: attempts('delivered', after), dead: attempts('dead', after) }).toEqual({
        retry: 6,
        delivered: 3,
        dead: 3,
      });
      expect(after.get('nyc_listings_webhook_attempt_delay_seconds_count{kind="first"}')).toBe(6);
      expect(after.get('nyc_listings_webhook_attempt_delay_seconds_count{kind="retry"}')).toBe(6);
      expect(after.get('nyc_listings_webhook_dead_letters')).toBe(3);
      expect(after.get('nyc_listings_webhook_queue_depth')).toBe(0);
      expect(after.get('nyc_listings_webhook_due')).toBe(0);
      expect(after.get('nyc_listings_webhook_oldest_due_age_seconds')).toBe(0);
    } finally {
      await flaky.close();
      await down.close();
    }
  });
});
