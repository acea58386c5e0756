import { describe, expect, it } from 'vitest';
import { CHANGE_TYPES } from '../../src/domain/change.js';
import { addSubscription } from '../../src/notify/webhook-admin.js';
import { feedSince } from '../helpers/http.js';
import { startReceiver } from '../helpers/receiver.js';
import { useRuntimesPerTest } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// Fair deliveries across subscriptions (issue 66): one subscription flooded with new events cannot starve another's
// retry that falls due meanwhile. Real dispatcher, real receivers on loopback, the events of real syncs.
const runtime = useRuntimesPerTest({ withoutRentHop: true });
const DAY = 24 * 3_600_000;
/** The wait before a first retry: the flood is still being delivered when it falls due. */
const RETRY_AFTER_SECONDS = 2;

describe('webhook deliveries across subscriptions', () => {
  it("a subscription's retry goes out within 10 s of its due time while another subscription is flooded with new events", async () => {
    const rt = await runtime(
      {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_RETRY_SCHEDULE_SECONDS: `0,${RETRY_AFTER_SECONDS},${RETRY_AFTER_SECONDS}`,
        WEBHOOK_POLL_SECONDS: '0.05',
        CHANGES_STREAM_POLL_SECONDS: '0.05',
      },
      // The dispatcher starts once the sync has made its events: a backlog, as after a worker's restart.
      { manualMarketClock: true, webhooks: false },
    );
    const key = await rt.key('business');
    const keyId = (await rt.keys.list()).at(-1)!.id;
    // The flooded receiver answers each delivery after 25 ms: a backlog of thousands takes many seconds to deliver.
    const flooded = await startReceiver(() => 204, { delayMs: 25 });
    // The other fails each event's first attempt: every one of its events is retried once.
    const other = await startReceiver((_path, seen) => (seen === 0 ? 503 : 204));
    try {
      const deps = { webhooks: rt.webhooks, keys: rt.keys, changes: rt.changes, config: rt.config, clock: () => new Date() };
      const flood = await addSubscription(deps, { keyId, url: `${flooded.url}/all`, events: [...CHANGE_TYPES], filter: '' });
      const few = await addSubscription(deps, { keyId, url: `${other.url}/sales`, events: ['listing.price_changed'], filter: 'kind=sale' });
      const start = await rt.changes.latestId();
      rt.marketClock!.advance(3 * DAY);
      await rt.syncer.syncAll();
      const [all, sales] = [
        await feedSince(rt.app, key, start),
        await feedSince(rt.app, key, start, '&types=listing.price_changed&kind=sale'),
      ];
      expect(sales.length).toBeGreaterThan(0);
      rt.dispatcher.start();
      const delivered = async (id: string, n: number) =>
        (await rt.webhooks.deliveries({ subscriptionId: id, limit: 100_000 })).filter((d) => d.status === 'delivered').length === n;
      await waitFor(() => delivered(few.subscription.id, sales.length), "the other subscription's events delivered", 120_000);
      await waitFor(() => delivered(flood.subscription.id, all.length), 'the flood delivered', 300_000);
      const firsts = new Map<string, number>();
      const lateness: number[] = [];
      for (const r of other.requests) {
        const id = String(r.headers['webhook-id']);
        const first = firsts.get(id);
        if (first === undefined) firsts.set(id, r.at);
        else lateness.push((r.at - first) / 1000 - RETRY_AFTER_SECONDS);
      }
      const floodEnd = Math.max(...flooded.requests.map((r) => r.at));
      const lastRetry = Math.max(...other.requests.map((r) => r.at));
      console.log(
        `fairness: ${flooded.requests.length} flooded deliveries, ${lateness.length} retries of the other subscription, late by at most ${Math.max(...lateness).toFixed(2)} s`,
      );
      expect(lateness.length).toBeGreaterThan(0);
      expect(lateness.length).toBe(firsts.size);
      // The retries fell due while the flood was still going out: the test measured what it means to.
      expect(lastRetry).toBeLessThan(floodEnd);
      expect(Math.max(...lateness)).toBeLessThanOrEqual(10);
    } finally {
      await flooded.close();
      await other.close();
    }
  }, 400_000);
});
