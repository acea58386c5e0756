import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { addSubscription } from '../../src/notify/webhook-admin.js';
import { feedSince, get } from '../helpers/http.js';
import { CLI, ROOT, SHARED_DATA } from '../helpers/paths.js';
import { startReceiver } from '../helpers/receiver.js';
import { useRuntimesPerTest, type TestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// Webhook delivery end to end: a market day, a sync, and signed POSTs to receivers on loopback,
// verified with the `standardwebhooks` package (an implementation independent of ours).
const runtime = useRuntimesPerTest({ withoutRentHop: true });
const DAY = 24 * 3_600_000;
const FAST = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,0.2,0.2',
  WEBHOOK_POLL_SECONDS: '0.05',
  CHANGES_STREAM_POLL_SECONDS: '0.05',
};

const keyId = async (rt: TestRuntime) => (await rt.keys.list()).at(-1)!.id;

describe('webhooks', () => {
  it('a receiver failing twice gets each event on the third attempt, same webhook-id, signature verified; one always failing ends as dead letters', async () => {
    const rt = await runtime(FAST, { manualMarketClock: true });
    const key = await rt.key('business');
    const id = await keyId(rt);
    const flaky = await startReceiver((_, seen) => (seen < 2 ? 503 : 204));
    const down = await startReceiver(() => 500);
    try {
      const deps = { webhooks: rt.webhooks, keys: rt.keys, changes: rt.changes, config: rt.config, clock: () => new Date() };
      const start = await rt.changes.latestId();
      const prices = await addSubscription(deps, {
        keyId: id,
        url: `${flaky.url}/hooks`,
        events: ['listing.price_changed'],
        filter: 'kind=rental',
      });
      const statuses = await addSubscription(deps, {
        keyId: id,
        url: `${down.url}/hooks`,
        events: ['listing.status_changed'],
        filter: 'kind=rental&minPrice=2000',
      });
      expect(prices.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      rt.marketClock!.advance(DAY);
      await rt.syncer.syncScope('rental', 300);
      const wantPrices = await feedSince(rt.app, key, start, '&types=listing.price_changed&kind=rental');
      const wantStatuses = await feedSince(rt.app, key, start, '&types=listing.status_changed&kind=rental&minPrice=2000');
      expect(wantPrices.length).toBeGreaterThan(5);
      expect(wantStatuses.length).toBeGreaterThan(0);

      const settled = async (subscription: string, n: number, status: string) =>
        (await rt.webhooks.deliveries({ subscriptionId: subscription, limit: 10_000 })).filter((d) => d.status === status).length === n;
      await waitFor(() => settled(prices.subscription.id, wantPrices.length, 'delivered'), 'every price change delivered');
      await waitFor(() => settled(statuses.subscription.id, wantStatuses.length, 'dead'), 'every status change dead-lettered');

      // Three attempts per event, one webhook-id per event across them, the body the same each time.
      const verifier = new Webhook(prices.secret);
      const byId = new Map<string, typeof flaky.requests>();
      for (const r of flaky.requests) byId.set(String(r.headers['webhook-id']), [...(byId.get(String(r.headers['webhook-id'])) ?? []), r]);
      expect(byId.size).toBe(wantPrices.length);
      const delivered = wantPrices.map((event) => {
        const attempts = [...byId.values()].find((rs) => JSON.parse(rs[0].body).data.id === event.id)!;
        expect(attempts.map((r) => r.status)).toEqual([503, 503, 204]);
        expect(new Set(attempts.map((r) => r.body)).size).toBe(1);
        for (const r of attempts) {
          expect(r.path).toBe('/hooks');
          expect(r.headers['content-type']).toBe('application/json');
          const payload = verifier.verify(r.body, r.headers as Record<string, string>) as any;
          expect(payload).toEqual({ type: 'listing.price_changed', timestamp: event.occurredAt, data: event });
        }
        return attempts;
      });
      // A wrong secret or a changed body does not verify.
      const sample = delivered[0][2];
      expect(() => new Webhook(statuses.secret).verify(sample.body, sample.headers as Record<string, string>)).toThrow();
      expect(() => verifier.verify(sample.body.replace('"newPrice":', '"newPrice":1'), sample.headers as Record<string, string>)).toThrow();

      const dead = await rt.webhooks.deliveries({ subscriptionId: statuses.subscription.id, status: 'dead', limit: 10_000 });
      expect(dead.every((d) => d.attempts === 3 && d.last_status_code === 500 && d.last_error === 'answered 500')).toBe(true);
      expect(down.requests.length).toBe(3 * wantStatuses.length);
      const attempts = await rt.webhooks.attempts(dead[0].id);
      expect(attempts.map((a) => a.status_code)).toEqual([500, 500, 500]);
      console.log(
        `webhooks: ${wantPrices.length} price changes delivered on the third attempt (webhook-id ${delivered[0][0].headers['webhook-id']}, ` +
          `signature ${delivered[0][2].headers['webhook-signature']}); ${dead.length} status changes dead-lettered after 3 attempts`,
      );
      console.log(
        `a signed delivery:\n${Object.entries(sample.headers)
          .filter(([k]) => k.startsWith('webhook-'))
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n')}\n${sample.body.slice(0, 300)}...`,
      );

      // A dead letter sent again goes out with the same webhook-id.
      const before = down.requests.length;
      expect(await rt.webhooks.redeliver(dead[0].id, new Date().toISOString())).toBe(true);
      await waitFor(
        async () =>
          (await rt.webhooks.deliveries({ subscriptionId: statuses.subscription.id, status: 'dead', limit: 10_000 })).length ===
            dead.length && down.requests.length === before + 3,
        'the redelivery to run its schedule',
      );
      expect(down.requests.slice(before).every((r) => r.headers['webhook-id'] === dead[0].message_id)).toBe(true);
    } finally {
      await flaky.close();
      await down.close();
    }
  }, 120_000);

  it('a slow receiver holds back only its own subscription, at most its share of attempts in flight', async () => {
    const rt = await runtime({ ...FAST, WEBHOOK_CONCURRENCY: '8', WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '2' }, { manualMarketClock: true });
    const key = await rt.key('business');
    const id = await keyId(rt);
    // A receiver that holds every request until released.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held: string[] = [];
    const slow = createServer((req, res) => {
      held.push(String(req.headers['webhook-id']));
      req.resume();
      void released.then(() => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const fast = await startReceiver(() => 204);
    try {
      const deps = { webhooks: rt.webhooks, keys: rt.keys, changes: rt.changes, config: rt.config, clock: () => new Date() };
      const start = await rt.changes.latestId();
      const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hooks`;
      const stuck = await addSubscription(deps, { keyId: id, url: slowUrl, events: ['listing.price_changed'], filter: 'kind=rental' });
      const quick = await addSubscription(deps, {
        keyId: id,
        url: `${fast.url}/hooks`,
        events: ['listing.price_changed'],
        filter: 'kind=rental',
      });
      rt.marketClock!.advance(DAY);
      await rt.syncer.syncScope('rental', 300);
      const want = await feedSince(rt.app, key, start, '&types=listing.price_changed&kind=rental');
      expect(want.length).toBeGreaterThan(5);
      const delivered = async (subscription: string) =>
        (await rt.webhooks.deliveries({ subscriptionId: subscription, status: 'delivered', limit: 10_000 })).length;
      await waitFor(async () => (await delivered(quick.subscription.id)) === want.length, 'every event delivered to the fast receiver');
      // Meanwhile the slow receiver holds two attempts, its share, and nothing of it was delivered.
      expect(held.length).toBe(2);
      expect(await delivered(stuck.subscription.id)).toBe(0);
      expect(rt.dispatcher.state().inFlight).toBe(2);
      const health = (await get(rt.app, '/v1/health')).body.webhooks;
      expect(health).toMatchObject({ running: true, inFlight: 2, pending: want.length, deadLetters: 0, lastError: null });
      release();
      await waitFor(
        async () => (await delivered(stuck.subscription.id)) === want.length,
        'every event delivered to the slow receiver once released',
      );
      expect(new Set(held).size).toBe(want.length);
    } finally {
      release();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
      await fast.close();
    }
  });

  it('claims a retry that fell due before new deliveries, each subscription at most its share', async () => {
    // The dispatcher off: the test claims and records attempts itself, as the dispatcher does.
    const rt = await runtime(FAST, { manualMarketClock: true, webhooks: false });
    await rt.key('business');
    const deps = { webhooks: rt.webhooks, keys: rt.keys, changes: rt.changes, config: rt.config, clock: () => new Date() };
    const a = await addSubscription(deps, {
      keyId: await keyId(rt),
      url: 'http://127.0.0.1:9/a',
      events: ['listing.price_changed'],
      filter: '',
    });
    const b = await addSubscription(deps, {
      keyId: await keyId(rt),
      url: 'http://127.0.0.1:9/b',
      events: ['listing.price_changed'],
      filter: '',
    });
    const t = (seconds: number) => new Date(Date.UTC(2030, 0, 1) + seconds * 1000).toISOString();
    const item = (eventId: number, subscription: string) => ({ eventId, messageId: `msg_${eventId}_${subscription}`, payload: '{}' });
    await rt.webhooks.enqueue(a.subscription.id, [item(1, 'a')], 1, t(0));
    const [first] = await rt.webhooks.claim(t(0), t(60), 10);
    expect(first.event_id).toBe(1);
    // It fails: due again at t + 5 s. Meanwhile a sync enqueues new deliveries, all due at t + 3 s: before the
    // retry's time, yet the retry goes first (strict due order would put it behind every one of them).
    await rt.webhooks.finish(
      { delivery_id: first.id, attempt: 1, attempted_at: t(0), status_code: 503, error: 'answered 503', ms: 1 },
      { status: 'pending', nextAttemptAt: t(5) },
    );
    await rt.webhooks.enqueue(
      a.subscription.id,
      [2, 3, 4, 5].map((e) => item(e, 'a')),
      5,
      t(3),
    );
    await rt.webhooks.enqueue(
      b.subscription.id,
      [2, 3].map((e) => item(e, 'b')),
      3,
      t(3),
    );
    const claimed = await rt.webhooks.claim(t(10), t(70), 10, { perSubscription: 2 });
    expect(claimed.map((d) => [d.subscription_id === a.subscription.id ? 'a' : 'b', d.event_id])).toEqual([
      ['a', 1],
      ['a', 2],
      ['b', 2],
      ['b', 3],
    ]);
    expect(claimed[0].attempts).toBe(2);
    // A subscription left out claims nothing of its own; a lease that runs is renewed, one given back is free again.
    expect(await rt.webhooks.claim(t(10), t(70), 10, { except: [a.subscription.id] })).toEqual([]);
    await rt.webhooks.renewLeases([claimed[0].id], t(500));
    await rt.webhooks.release([claimed[1].id]);
    const later = await rt.webhooks.claim(t(100), t(160), 10, { perSubscription: 10 });
    expect(later.map((d) => d.event_id).sort()).toEqual([2, 2, 3, 3, 4, 5]);
    expect(later.find((d) => d.id === claimed[1].id)!.attempts).toBe(1);
  });

  it('delivers nothing to a private target unless allowed, and nothing for a key below the plan', async () => {
    const rt = await runtime({ ...FAST, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, { manualMarketClock: true });
    await rt.key('business');
    const id = await keyId(rt);
    const deps = { webhooks: rt.webhooks, keys: rt.keys, changes: rt.changes, config: rt.config, clock: () => new Date() };
    await expect(
      addSubscription(deps, { keyId: id, url: 'http://127.0.0.1:9/hooks', events: ['listing.listed'], filter: '' }),
    ).rejects.toThrow(/https/);
    await expect(
      addSubscription(deps, { keyId: id, url: 'https://127.0.0.1/hooks', events: ['listing.listed'], filter: '' }),
    ).rejects.toThrow(/private, loopback or reserved/);
    await expect(
      addSubscription(deps, { keyId: id, url: 'https://[::ffff:10.0.0.1]/hooks', events: ['listing.listed'], filter: '' }),
    ).rejects.toThrow(/private, loopback or reserved/);
    await expect(
      addSubscription(deps, { keyId: id, url: 'https://169.254.169.254/latest', events: ['listing.listed'], filter: '' }),
    ).rejects.toThrow(/private, loopback or reserved/);
    await expect(
      addSubscription(deps, { keyId: id, url: 'https://user:pw@example.com/', events: ['listing.listed'], filter: '' }),
    ).rejects.toThrow(/credentials/);
    await expect(
      addSubscription(deps, { keyId: id, url: 'https://93.184.216.34/hooks', events: ['listing.rented'], filter: '' }),
    ).rejects.toThrow(/unknown: listing.rented/);
    await rt.key('pro');
    await expect(
      addSubscription(deps, { keyId: await keyId(rt), url: 'https://93.184.216.34/hooks', events: ['listing.listed'], filter: '' }),
    ).rejects.toThrow(/business plan/);

    // A loopback target stored while allowed is still refused at delivery time once not allowed.
    const receiver = await startReceiver(() => 200);
    try {
      const now = new Date().toISOString();
      await rt.webhooks.add({
        id: 'wh_stored',
        key_id: id,
        url: `${receiver.url}/x`,
        events: 'listing.price_changed',
        filter: '',
        secret: 'whsec_AAAA',
        created_at: now,
        removed_at: null,
        cursor: await rt.changes.latestId(),
      });
      rt.marketClock!.advance(DAY);
      await rt.syncer.syncScope('rental', 300);
      await waitFor(async () => {
        const ds = await rt.webhooks.deliveries({ subscriptionId: 'wh_stored' });
        return ds.length > 0 && ds.every((d) => d.status === 'dead');
      }, 'the deliveries to a loopback target to be refused');
      expect(receiver.requests.length).toBe(0);
      expect((await rt.webhooks.deliveries({ subscriptionId: 'wh_stored' }))[0].last_error).toMatch(/refused: 127.0.0.1/);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it("the operator's command line: add shows the secret once, list never; bad filters, keys and targets are named", async () => {
    const rt = await runtime();
    await rt.key('business');
    const id = await keyId(rt);
    const file = rt.config.databaseUrl;
    await rt.close();
    const cli = async (args: string[], env: Record<string, string> = {}) => {
      try {
        const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'webhooks', ...args], {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: file, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'silent', ...env },
        });
        return { code: 0, stdout, stderr };
      } catch (error: any) {
        return { code: error.code as number, stdout: error.stdout as string, stderr: error.stderr as string };
      }
    };
    const [added, badFilter, badArea, privateTarget] = await Promise.all([
      cli(
        [
          'add',
          '--key',
          id,
          '--url',
          'http://127.0.0.1:9/hooks',
          '--events',
          'listing.price_changed,listing.listed',
          '--filter',
          'kind=rental&areas=200&maxPrice=3000',
        ],
        { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
      ),
      cli([
        'add',
        '--key',
        id,
        '--url',
        'https://93.184.216.34/',
        '--events',
        'listing.listed',
        '--filter',
        'kind=boat&maxPrice=1e9&color=red',
      ]),
      cli(['add', '--key', id, '--url', 'https://93.184.216.34/', '--events', 'listing.listed', '--filter', 'areas=999999']),
      cli(['add', '--key', id, '--url', 'https://127.0.0.1/', '--events', 'listing.listed']),
    ]);
    expect(added.code, added.stderr).toBe(0);
    const subscription = JSON.parse(added.stdout);
    expect(subscription).toMatchObject({
      id: expect.stringMatching(/^wh_[0-9a-f]{16}$/),
      secret: expect.stringMatching(/^whsec_/),
      events: ['listing.price_changed', 'listing.listed'],
    });
    expect(added.stderr).toMatch(/shown this once/);
    expect(badFilter.code).toBe(2);
    expect(badFilter.stderr).toMatch(/kind/);
    expect(badFilter.stderr).toMatch(/maxPrice/);
    expect(badFilter.stderr).toMatch(/color/);
    expect(badArea.code).toBe(2);
    expect(badArea.stderr).toMatch(/unknown area id 999999/);
    expect(privateTarget.code).toBe(1);
    expect(privateTarget.stderr).toMatch(/private, loopback or reserved/);
    const [listed, deliveries, removed, redeliver] = await Promise.all([
      cli(['list']),
      cli(['deliveries', '--status', 'dead']),
      cli(['remove', 'wh_nope']),
      cli(['redeliver', '12345']),
    ]);
    expect(listed.stdout).toContain(subscription.id);
    expect(listed.stdout).toContain('kind=rental&areas=200&maxPrice=3000');
    expect(listed.stdout).not.toContain(subscription.secret);
    expect(deliveries.stdout.split('\n')[0]).toMatch(/^id\tsubscription\twebhook-id/);
    expect(removed.code).toBe(1);
    expect(redeliver.code).toBe(1);
    expect((await cli(['remove', subscription.id])).code).toBe(0);
    expect((await cli(['list'])).stdout).toMatch(new RegExp(`${subscription.id}.*removed`));
  }, 120_000);
});
