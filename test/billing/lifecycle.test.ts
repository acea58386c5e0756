import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventObject } from '../../src/upstream/local-stripe/objects.js';
import { buy, checkoutSession, emulatorOf, eventAbout, metricValue, payWith, sendEvent, successOf } from '../helpers/billing.js';
import { get } from '../helpers/http.js';
import { CLI, ROOT, SHARED_DATA } from '../helpers/paths.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// The lifecycle of a key sold through Stripe (docs/billing.md), through the real app and the real local Stripe emulator:
// its events signed with the SDK's test header, the subscription read back from the emulator through the SDK.
let rt: TestRuntime;
let now = Date.now();
const warnings: { msg: string; reason?: string; price?: string }[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write: (chunk, _e, done) => {
      const line = JSON.parse(chunk.toString());
      if (line.level === 40) warnings.push(line);
      done();
    },
  });
  rt = await startTestRuntime(
    { RATE_LIMIT_STARTER_PER_MINUTE: '30', RATE_LIMIT_PRO_PER_MINUTE: '60' },
    {
      withoutRentHop: true,
      logger: pino({ level: 'warn' }, sink),
      clock: () => new Date(now),
    },
  );
});
afterAll(async () => rt?.close());

/** Sends the emulator's latest event of `type` about `id`, signed, and returns the service's outcome. */
async function deliverLatest(type: string, id: string): Promise<string> {
  const event = emulatorOf(rt)
    .account.state.events.filter((e) => e.type === type && e.object.id === id)
    .at(-1);
  if (!event) throw new Error(`no ${type} event about ${id}`);
  const res = await sendEvent(rt, eventObject(event));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.outcome;
}

/** The page size, per-minute limit and plan-gated answer a key gets now. */
async function entitlements(key: string) {
  const search = await get(rt.app, '/v1/search/rentals?perPage=500', key);
  const usage = await get(rt.app, '/v1/usage', key);
  const comparables = await get(rt.app, '/v1/property/1545/comparables?limit=1', key);
  return {
    perPage: search.body.meta?.perPage,
    perMinute: Number(search.headers['x-ratelimit-limit']),
    perMonth: usage.body.data?.limits.perMonth,
    comparables: comparables.status,
  };
}

const price = (plan: 'starter' | 'pro' | 'business', interval = 0) => rt.config.billing.stripe.prices[plan][interval];

describe('a checkout', () => {
  it("issues one key of its price's plan, shown once; its event, arriving after, issues no second", async () => {
    const bought = await buy(rt, 'starter');
    expect(bought.plan).toBe('starter');
    expect(await entitlements(bought.key)).toEqual({ perPage: 50, perMinute: 30, perMonth: 5000, comparables: 403 });
    const again = await rt.app.inject({
      method: 'GET',
      url: `/billing/success?session_id=${bought.sessionId}`,
      headers: { accept: 'application/json' },
    });
    expect({ status: again.statusCode, code: JSON.parse(again.body).code }).toEqual({ status: 410, code: 'KEY_ALREADY_SHOWN' });
    const page = await rt.app.inject({
      method: 'GET',
      url: `/billing/success?session_id=${bought.sessionId}`,
      headers: { accept: 'text/html' },
    });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('shown already');
    expect(page.body).not.toContain(bought.key);
    expect(await deliverLatest('checkout.session.completed', bought.sessionId)).toBe('applied');
    const keys = (await rt.keys.list()).filter((k) => k.subscription_id === bought.subscriptionId);
    expect(keys.map((k) => ({ source: k.source, plan: k.plan, status: k.subscription_status, subject: k.subject }))).toEqual([
      { source: 'stripe', plan: 'starter', status: 'active', subject: `subscription:${bought.subscriptionId}` },
    ]);
  });

  it('paid with a declined card issues nothing: no customer, no subscription, no key; its success page says it is not paid', async () => {
    const before = { keys: (await rt.keys.list()).length, subscriptions: emulatorOf(rt).account.state.subscriptions.size };
    const sessionId = await checkoutSession(rt, 'pro');
    expect(payWith(rt, sessionId, '4000 0000 0000 0341')).toEqual({ error: 'Your card was declined.' });
    const success = await successOf(rt, sessionId);
    expect({ status: success.status, code: success.body.code }).toEqual({ status: 409, code: 'CHECKOUT_NOT_PAID' });
    expect({ keys: (await rt.keys.list()).length, subscriptions: emulatorOf(rt).account.state.subscriptions.size }).toEqual(before);
  });

  it('asked at the success page and by its event at the same moment issues one key', async () => {
    const sessionId = await checkoutSession(rt, 'pro');
    expect(payWith(rt, sessionId)).toHaveProperty('redirect');
    const completed = emulatorOf(rt)
      .account.state.events.filter((e) => e.type === 'checkout.session.completed')
      .at(-1)!;
    const [page, event] = await Promise.all([successOf(rt, sessionId), sendEvent(rt, eventObject(completed))]);
    expect(page.status).toBe(200);
    expect(event.body.outcome).toBe('applied');
    const subscription = emulatorOf(rt).account.state.sessions.get(sessionId)!.subscription;
    expect((await rt.keys.list()).filter((k) => k.subscription_id === subscription)).toHaveLength(1);
  });

  it('a plan that is not sold, or an unknown one, is refused before Stripe is asked', async () => {
    const requests = emulatorOf(rt).requests.length;
    const form = (payload: string) =>
      rt.app.inject({
        method: 'POST',
        url: '/billing/checkout',
        payload,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      });
    const free = await form('plan=free');
    expect({ status: free.statusCode, code: JSON.parse(free.body).code }).toEqual({ status: 400, code: 'INVALID_PARAMS' });
    const foreign = await form(`plan=starter&price=${price('pro')}`);
    expect({ status: foreign.statusCode, code: JSON.parse(foreign.body).code }).toEqual({ status: 409, code: 'PLAN_NOT_SOLD' });
    const unknownField = await form('plan=pro&coupon=x');
    expect(unknownField.statusCode).toBe(400);
    expect(emulatorOf(rt).requests.length).toBe(requests);
  });
});

describe('a plan changed in the portal', () => {
  it('applies at once to page size, per-minute limit, quota and plan-gated endpoints, up and down', async () => {
    const { key, subscriptionId } = await buy(rt, 'starter');
    expect(await entitlements(key)).toEqual({ perPage: 50, perMinute: 30, perMonth: 5000, comparables: 403 });
    emulatorOf(rt).account.changePrice(subscriptionId, price('pro'));
    expect(await deliverLatest('customer.subscription.updated', subscriptionId)).toBe('applied');
    expect(await entitlements(key)).toEqual({ perPage: 500, perMinute: 60, perMonth: 25000, comparables: 200 });
    emulatorOf(rt).account.changePrice(subscriptionId, price('starter', 1));
    expect(await deliverLatest('customer.subscription.updated', subscriptionId)).toBe('applied');
    expect(await entitlements(key)).toEqual({ perPage: 50, perMinute: 30, perMonth: 5000, comparables: 403 });
  });
});

describe('events twice, late and out of order', () => {
  it('apply the state Stripe holds now, each id once', async () => {
    const { key, subscriptionId } = await buy(rt, 'starter');
    const account = emulatorOf(rt).account;
    account.changePrice(subscriptionId, price('pro'));
    const toPro = account.state.events.at(-1)!;
    account.changePrice(subscriptionId, price('business'));
    const toBusiness = account.state.events.at(-1)!;
    // The later change first, then the earlier one: the earlier event's object says pro, Stripe says business.
    expect((await sendEvent(rt, eventObject(toBusiness))).body.outcome).toBe('applied');
    expect((await sendEvent(rt, eventObject(toPro))).body.outcome).toBe('applied');
    expect((await rt.keys.findByDigest((await rt.keys.list()).find((k) => k.subscription_id === subscriptionId)!.digest))?.plan).toBe(
      'business',
    );
    const duplicate = await sendEvent(rt, eventObject(toBusiness));
    expect(duplicate).toEqual({ status: 200, body: { received: true, outcome: 'duplicate' } });
    expect((await get(rt.app, '/v1/search/rentals?perPage=500', key)).body.meta.perPage).toBe(500);
    expect(
      await metricValue(rt, 'nyc_listings_billing_events_total', { type: 'customer.subscription.updated', outcome: 'duplicate' }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe('each status of a subscription', () => {
  // Every route a key is read on: refused before its parameters are checked, so placeholders do.
  const keyedRoutes = () =>
    rt.app.routeIndex
      .routes()
      .filter((r) => r.access !== 'public' && r.method === 'GET')
      .map((r) => r.url.replace(/:\w+/g, '1545'));

  it.each([
    ['active', 'works'],
    ['trialing', 'works'],
    ['past_due', 'grace'],
    ['unpaid', 'refused'],
    ['paused', 'refused'],
    ['incomplete_expired', 'refused'],
  ])('%s: the key %s', async (status, access) => {
    const { key, subscriptionId } = await buy(rt, 'pro');
    emulatorOf(rt).account.setStatus(subscriptionId, status);
    expect(await deliverLatest('customer.subscription.updated', subscriptionId)).toBe('applied');
    const usage = await get(rt.app, '/v1/usage', key);
    if (access === 'refused') {
      for (const url of keyedRoutes()) {
        const res = await get(rt.app, url, key);
        expect({ url, status: res.status, code: res.body.code }).toEqual({ url, status: 403, code: 'SUBSCRIPTION_INACTIVE' });
        expect(res.body).toMatchObject({ subscriptionStatus: status, account: '/account', pricing: '/pricing' });
      }
      return;
    }
    expect(usage.status).toBe(200);
    expect(usage.body.data.subscription).toMatchObject({ status });
    expect(usage.body.data.subscription.notice === null).toBe(access === 'works');
    if (access === 'grace') expect(usage.body.data.subscription.notice).toMatch(/retrying/);
    expect((await get(rt.app, '/v1/property/1545', key)).status).toBe(200);
  });

  it('canceled in the portal (customer.subscription.deleted): 403 on every route; a new checkout brings a new key', async () => {
    const first = await buy(rt, 'business');
    emulatorOf(rt).account.cancel(first.subscriptionId, false);
    expect(await deliverLatest('customer.subscription.deleted', first.subscriptionId)).toBe('applied');
    for (const url of keyedRoutes()) expect((await get(rt.app, url, first.key)).body.code, url).toBe('SUBSCRIPTION_INACTIVE');
    const second = await buy(rt, 'business');
    expect(second.key).not.toBe(first.key);
    expect((await get(rt.app, '/v1/usage', second.key)).body.data.plan).toBe('business');
    expect((await get(rt.app, '/v1/usage', first.key)).status).toBe(403);
  });

  it('a price no plan lists grants nothing: its key is refused and a warning says which price', async () => {
    const { key, subscriptionId } = await buy(rt, 'pro');
    const state = emulatorOf(rt).account.state;
    const legacy = { ...state.prices.get(price('pro'))!, id: 'price_LegacyProNotSoldHere000', lookupKey: 'legacy' };
    state.prices.set(legacy.id, legacy);
    emulatorOf(rt).account.changePrice(subscriptionId, legacy.id);
    expect(await deliverLatest('customer.subscription.updated', subscriptionId)).toBe('applied');
    const res = await get(rt.app, '/v1/usage', key);
    expect({ status: res.status, code: res.body.code, subscriptionStatus: res.body.subscriptionStatus }).toEqual({
      status: 403,
      code: 'SUBSCRIPTION_INACTIVE',
      subscriptionStatus: 'unknown_price',
    });
    expect(warnings.some((w) => w.price === legacy.id)).toBe(true);
  });
});

describe('events that are not applied', () => {
  it('forged, stale, unsigned or malformed: 400, nothing changed, a warning and a count each', async () => {
    const { subscriptionId } = await buy(rt, 'starter');
    const event = eventAbout('customer.subscription.updated', { id: subscriptionId, object: 'subscription' });
    const before = {
      rejected: await metricValue(rt, 'nyc_listings_billing_events_total', { type: 'unverified', outcome: 'rejected' }),
      warnings: warnings.length,
    };
    const attempts = [
      await sendEvent(rt, event, { secret: 'whsec_someone_else' }),
      await sendEvent(rt, event, { timestamp: Math.floor(now / 1000) - 301 }),
      await sendEvent(rt, event, { signature: null }),
      await sendEvent(rt, '{"id": "evt_1", "type": ', {}),
    ];
    expect(attempts.map((a) => [a.status, a.body.code])).toEqual([
      [400, 'WEBHOOK_SIGNATURE_INVALID'],
      [400, 'WEBHOOK_SIGNATURE_INVALID'],
      [400, 'WEBHOOK_SIGNATURE_INVALID'],
      [400, 'BAD_REQUEST'],
    ]);
    expect(await metricValue(rt, 'nyc_listings_billing_events_total', { type: 'unverified', outcome: 'rejected' })).toBe(
      before.rejected + 4,
    );
    expect(warnings.slice(before.warnings).map((w) => w.reason)).toEqual(['signature', 'signature', 'unsigned', 'malformed']);
    // None of them was recorded: the same event, signed, is applied.
    expect((await sendEvent(rt, event)).body.outcome).toBe('applied');
  });

  it('an event of a type the service does not act on is acknowledged and ignored, once', async () => {
    const event = eventAbout('invoice.finalized', { id: 'in_test_1', object: 'invoice' });
    const before = await metricValue(rt, 'nyc_listings_billing_events_total', { type: 'invoice.finalized', outcome: 'ignored' });
    expect(await sendEvent(rt, event)).toEqual({ status: 200, body: { received: true, outcome: 'ignored' } });
    expect(await sendEvent(rt, event)).toEqual({ status: 200, body: { received: true, outcome: 'duplicate' } });
    expect(await metricValue(rt, 'nyc_listings_billing_events_total', { type: 'invoice.finalized', outcome: 'ignored' })).toBe(before + 1);
  });
});

describe('a key rotated at /account', () => {
  it('both keys work during the grace, only the new one after it; the month is counted for both together', async () => {
    const { key: old } = await buy(rt, 'pro');
    for (let i = 0; i < 3; i++) expect((await get(rt.app, '/v1/areas?level=0', old)).status).toBe(200);
    const rotated = await rt.app.inject({
      method: 'POST',
      url: '/account/keys/rotate',
      headers: { authorization: `Bearer ${old}`, accept: 'application/json' },
    });
    expect(rotated.statusCode).toBe(200);
    const { key: fresh, previousKeyExpiresAt } = JSON.parse(rotated.body).data;
    expect(Date.parse(previousKeyExpiresAt)).toBe(now + rt.config.billing.keyRotationGraceSeconds * 1000);
    expect((await get(rt.app, '/v1/areas?level=0', old)).status).toBe(200);
    expect((await get(rt.app, '/v1/areas?level=0', fresh)).status).toBe(200);
    // Three and one by the old key, one by the new: one month's count.
    expect((await get(rt.app, '/v1/usage', fresh)).body.data.month.used).toBe(5);
    const again = await rt.app.inject({
      method: 'POST',
      url: '/account/keys/rotate',
      headers: { authorization: `Bearer ${old}`, accept: 'application/json' },
    });
    expect({ status: again.statusCode, code: JSON.parse(again.body).code }).toEqual({ status: 409, code: 'KEY_REPLACED' });
    now += rt.config.billing.keyRotationGraceSeconds * 1000;
    const expired = await get(rt.app, '/v1/areas?level=0', old);
    expect({ status: expired.status, code: expired.body.code }).toEqual({ status: 401, code: 'EXPIRED_API_KEY' });
    expect(expired.body.detail).toMatch(/replaced/);
    expect((await get(rt.app, '/v1/areas?level=0', fresh)).status).toBe(200);
  });
});

describe('the command line', () => {
  it('`keys list` shows where each key came from, its customer, subscription and status; `keys rotate` prints a new key', async () => {
    const { key, subscriptionId } = await buy(rt, 'starter');
    const env = { ...process.env, DATABASE_URL: rt.config.databaseUrl, SHARED_DATA_DIR: SHARED_DATA, LOG_LEVEL: 'silent' };
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, [CLI, 'keys', ...args], { cwd: ROOT, env });
    const rows = (await cli('list')).stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    const header = rows[0];
    const row = Object.fromEntries(header.map((name, i) => [name, rows.find((r) => r.includes(subscriptionId))![i]]));
    const customer = emulatorOf(rt).account.state.subscriptions.get(subscriptionId)!.customer;
    expect(row).toMatchObject({
      plan: 'starter',
      status: 'active',
      source: 'stripe',
      customer,
      subscription: subscriptionId,
      'subscription status': 'active',
    });
    const rotated = await cli('rotate', row.id);
    const fresh = rotated.stdout.trim();
    expect(fresh).toMatch(/^SERVICE_[0-9a-f-]{36}$/);
    expect(rotated.stderr).toMatch(/works until/);
    for (const k of [key, fresh]) expect((await get(rt.app, '/v1/usage', k)).body.data.plan).toBe('starter');
  });
});
