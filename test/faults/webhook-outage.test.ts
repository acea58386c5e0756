import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { faultRun, fetchJson, readMirror, ROOMY } from './fault-run.js';

// The fault matrix's webhook receiver down for two minutes (issue 45, docs/operations.md "Tested"), on a mirror of its
// own (the city without RentHop, synced from nothing), beside the cases on the whole city's mirror (city-faults.test.ts).

const run = faultRun();

describe('a webhook receiver is down for two minutes, then back', () => {
  it(
    'gets every event at least once, duplicates at most 1 %',
    async () => {
      const shared = run.sharedWithoutRentHop('shared-without-renthop');
      const file = join(run.dir, 'webhooks.db');
      const port = await freePort();
      const hookPort = await freePort();
      const admin = await freePort();
      const env = {
        ...ROOMY,
        SHARED_DATA_DIR: shared,
        DATABASE_URL: file,
        PORT: String(port),
        LOCAL_UPSTREAM_ADMIN_PORT: String(admin),
        SYNC_INTERVAL_SECONDS: '5',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_POLL_SECONDS: '0.2',
        WEBHOOK_TIMEOUT_SECONDS: '2',
        // The first attempt at once, then waits that outlast a two-minute outage.
        WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,5,10,20,30,30,30,30,30,30',
      };
      const key = await run.cli(['keys', 'issue', '--plan', 'business'], env);
      const service = run.start('webhook-outage', ['serve'], env);
      await service.waitForLine(/nyc-listings listening/, 'the service to start', 120_000);
      // Its own mirror, synced from nothing: the events are the market's moves after the subscription starts.
      await service.waitForLine(/first sync done/, 'the first sync', 300_000);
      const base = `http://127.0.0.1:${port}`;
      // `keys list`: a header line, then one tab-separated line a key, its id first.
      const keyId = (await run.cli(['keys', 'list'], env)).split('\n')[1].split('\t')[0];
      const added = await run.cli(
        [
          'webhooks',
          'add',
          '--key',
          keyId,
          '--url',
          `http://127.0.0.1:${hookPort}/hooks`,
          '--events',
          'listing.listed,listing.price_changed,listing.status_changed',
        ],
        env,
      );
      expect(added).toMatch(/wh_/);
      // Where the subscription starts: events after its cursor are its own.
      const head = String(
        readMirror(file, (db) => (db.prepare('select cursor from webhook_subscriptions').get() as { cursor: number }).cursor),
      );
      // A market day: listings listed, repriced and delisted; the scheduler's next sync brings them in.
      const advanced = await request(`http://127.0.0.1:${admin}/market/advance?hours=24`, { method: 'POST' });
      expect(advanced.statusCode).toBe(200);
      await advanced.body.dump();
      await waitFor(
        async () => (await fetchJson(`${base}/v1/changes?since=${head}&perPage=1`, key)).body.data.length > 0,
        "the sync to record the day's changes",
        300_000,
      );
      // Down: nothing listens on the receiver's port; from the first failed attempt, for two minutes.
      await service.waitForLine(/webhook attempt failed; will retry/, 'a first attempt to fail', 120_000);
      const downSince = Date.now();
      await waitFor(async () => Date.now() - downSince >= 120_000, 'two minutes of outage', 130_000);
      const received: string[] = [];
      const receiver: Server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          received.push(String(req.headers['webhook-id']));
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolvePromise) => receiver.listen(hookPort, '127.0.0.1', resolvePromise));
      try {
        /** Every event of the feed after the subscription's start, of its types. */
        const feed = async () => {
          const ids: string[] = [];
          let cursor = head;
          for (;;) {
            const page = (
              await fetchJson(
                `${base}/v1/changes?since=${cursor}&perPage=500&types=listing.listed,listing.price_changed,listing.status_changed`,
                key,
              )
            ).body;
            ids.push(...page.data.map((e: { id: string }) => String(e.id)));
            if (page.data.length < 500) return ids;
            cursor = page.meta.next;
          }
        };
        const eventOf = (webhookId: string) => /^msg_(\d+)_/.exec(webhookId)?.[1];
        let want: string[] = [];
        // The scheduler keeps syncing: the feed is read again until every event in it has reached the receiver.
        await waitFor(
          async () => {
            want = await feed();
            const got = new Set(received.map(eventOf));
            return want.every((id) => got.has(id));
          },
          'every event delivered once the receiver is back',
          6 * 60_000,
        );
        expect(want.length).toBeGreaterThan(10);
        const duplicates = received.length - new Set(received).size;
        console.log(
          `webhook outage of 120 s: ${want.length} events, ${received.length} deliveries, ${duplicates} duplicates (${((100 * duplicates) / received.length).toFixed(2)} %)`,
        );
        expect(duplicates / received.length).toBeLessThanOrEqual(0.01);
      } finally {
        await new Promise<void>((r) => receiver.close(() => r()));
        await service.stop();
      }
    },
    12 * 60_000,
  );
});
