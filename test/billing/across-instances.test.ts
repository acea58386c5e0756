import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { eventObject } from '../../src/upstream/local-stripe/objects.js';
import { buy, emulatorOf, sendEvent } from '../helpers/billing.js';
import { get } from '../helpers/http.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// Keys sold through Stripe on the machine's PostgreSQL and Redis: a plan or status applied on one instance holds at
// once on another that holds the key in memory (KEY_CACHE_SECONDS far longer than the test); and an event that meets
// the database down is answered 5xx, sent again by the emulator as Stripe does, and applied once when it is back.
const SERVER = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const run = `${process.pid}_${Date.now()}`;
const started: TestRuntime[] = [];
const admin = new pg.Client({ connectionString: SERVER });
await admin.connect();
const cleanup: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const rt of started.reverse()) await rt.close();
  for (const step of cleanup) await step();
  await admin.end();
});

/** A runtime on PostgreSQL with no listings (none is needed: keys and plans are what is tested). */
async function instance(env: Record<string, string>, localStripe = {}): Promise<TestRuntime> {
  const rt = await startTestRuntime(
    { KEY_CACHE_SECONDS: '600', LOCAL_STRIPE_STATE_FILE: '-', ...env },
    { initialSync: false, initialOpenDataSync: false, withoutRentHop: true, localStripe },
  );
  started.push(rt);
  return rt;
}

/** The Stripe settings of an instance that uses `other`'s emulator as its Stripe. */
function sameStripe(other: TestRuntime): Record<string, string> {
  const { stripe } = other.config.billing;
  return {
    STRIPE_SECRET_KEY: stripe.secretKey!,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret!,
    STRIPE_API_URL: stripe.apiUrl,
    STRIPE_PRICE_STARTER: stripe.prices.starter.join(','),
    STRIPE_PRICE_PRO: stripe.prices.pro.join(','),
    STRIPE_PRICE_BUSINESS: stripe.prices.business.join(','),
  };
}

describe('two instances on PostgreSQL and Redis', () => {
  it('a plan changed, and a subscription ended, through one instance hold at once on the other', async () => {
    const schema = `nyc_billing_${run}`;
    await admin.query(`create schema ${schema}`);
    cleanup.push(() => admin.query(`drop schema ${schema} cascade`));
    const shared = {
      DATABASE_URL: `${SERVER}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `nyc-listings-billing-${run}:`,
    };
    const a = await instance(shared);
    const b = await instance({ ...shared, ...sameStripe(a) });
    expect(b.stripe).toBeNull();
    const { key, subscriptionId } = await buy(a, 'starter');
    const onB = async () => {
      const usage = await get(b.app, '/v1/usage', key);
      const history = await get(b.app, '/v1/market/history?kind=rental', key);
      return { status: usage.status, plan: usage.body.data?.plan, perPage: usage.body.data?.limits.maxPerPage, history: history.status };
    };
    // B reads the key now and holds it in memory.
    expect(await onB()).toEqual({ status: 200, plan: 'starter', perPage: 50, history: 403 });
    const account = emulatorOf(a).account;
    account.changePrice(subscriptionId, a.config.billing.stripe.prices.pro[0]);
    expect((await sendEvent(a, eventObject(account.state.events.at(-1)!))).body.outcome).toBe('applied');
    const changed = Date.now();
    await waitFor(async () => (await onB()).plan === 'pro', 'the upgrade seen on B', 5_000);
    expect(Date.now() - changed).toBeLessThan(5_000);
    expect((await onB()).perPage).toBe(500);
    expect((await onB()).history).not.toBe(403);
    // The other way: an event B applies ends the key on A, which held it too.
    expect((await get(a.app, '/v1/usage', key)).body.data.plan).toBe('pro');
    account.setStatus(subscriptionId, 'unpaid');
    expect((await sendEvent(b, eventObject(account.state.events.at(-1)!))).body.outcome).toBe('applied');
    await waitFor(async () => (await get(a.app, '/v1/usage', key)).status === 403, 'the end seen on A', 5_000);
    expect((await get(a.app, '/v1/usage', key)).body.code).toBe('SUBSCRIPTION_INACTIVE');
  });
});

describe('the database down during an event', () => {
  it('is answered 5xx; the emulator sends the event again, as Stripe does, and it is applied once when the database is back', async () => {
    const database = `nyc_billing_down_${run}`;
    await admin.query(`create database ${database}`);
    const url = new URL(SERVER);
    url.pathname = `/${database}`;
    const rt = await instance({ DATABASE_URL: url.href }, { retrySeconds: Array(50).fill(0.2) });
    cleanup.push(() => admin.query(`drop database if exists ${database} with (force)`));
    const base = await rt.app.listen({ port: 0, host: '127.0.0.1' });
    emulatorOf(rt).forwardTo(`${base}/billing/stripe/webhook`);
    const { key, subscriptionId } = await buy(rt, 'starter');
    const account = emulatorOf(rt).account;
    await waitFor(() => emulatorOf(rt).pendingDeliveries() === 0, 'the checkout events delivered');
    // Down: no new connection, and the open ones ended.
    await admin.query(`alter database ${database} with allow_connections false`);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [database]);
    const attempted = emulatorOf(rt).attempts.length;
    account.changePrice(subscriptionId, rt.config.billing.stripe.prices.business[0]);
    const event = account.state.events.at(-1)!;
    await waitFor(() => emulatorOf(rt).attempts.filter((x) => x.eventId === event.id).length >= 2, 'two failed attempts');
    const failed = emulatorOf(rt)
      .attempts.slice(attempted)
      .filter((x) => x.eventId === event.id);
    expect(failed.every((x) => x.status !== null && x.status >= 500)).toBe(true);
    await admin.query(`alter database ${database} with allow_connections true`);
    await waitFor(() => emulatorOf(rt).pendingDeliveries() === 0, 'the event delivered once the database is back');
    const attempts = emulatorOf(rt)
      .attempts.filter((x) => x.eventId === event.id)
      .map((x) => x.status);
    expect(attempts.at(-1)).toBe(200);
    expect(attempts.filter((s) => s === 200)).toHaveLength(1);
    const applied = await rt.store.db.selectFrom('billing_events').select(['id', 'outcome']).where('id', '=', event.id).execute();
    expect(applied).toEqual([{ id: event.id, outcome: 'applied' }]);
    expect((await get(rt.app, '/v1/usage', key)).body.data.plan).toBe('business');
  });
});
