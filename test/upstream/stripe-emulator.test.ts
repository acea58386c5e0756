import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_API_VERSION as SERVICE_VERSION } from '../../src/billing/stripe-provider.js';
import { customerObject, eventObject, productObject } from '../../src/upstream/local-stripe/objects.js';
import { STRIPE_API_VERSION } from '../../src/upstream/local-stripe/records.js';
import { startLocalStripe, type LocalStripe } from '../../src/upstream/local-stripe/server.js';
import { ROOT } from '../helpers/paths.js';
import { waitFor } from '../helpers/wait.js';

// The local Stripe emulator against what is known of Stripe: its objects hold exactly the fields of Stripe's own
// fixtures (an extract of stripe/openapi's openapi/fixtures3.json, test/fixtures/stripe/), read through the official
// SDK; its events verify with the SDK; its API refuses what Stripe refuses.
const FIXTURES = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/stripe/fixtures3-extract.json'), 'utf8')) as {
  apiVersion: string;
  resources: Record<string, Record<string, unknown>>;
};

let emulator: LocalStripe;
let stripe: Stripe;

beforeAll(async () => {
  emulator = await startLocalStripe();
  const url = new URL(emulator.url);
  stripe = new Stripe(emulator.secretKey, {
    apiVersion: SERVICE_VERSION,
    host: url.hostname,
    port: url.port,
    protocol: 'http',
    telemetry: false,
  });
});
afterAll(async () => emulator?.close());

/** A plain JSON object (not an array, not null). */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Objects whose keys are the caller's own (metadata) or a free map: their keys are not a shape. */
const FREE_MAPS = new Set(['metadata', 'payment_method_options']);

/**
 * The differences between an object's fields and the fixture's, path by path: a field one has and the other lacks,
 * recursively where both hold an object (a list's first item stands for its items). Where the fixture shows an object
 * and the emulator null, the field is one Stripe documents as nullable and the emulator does not model.
 */
function shapeDifferences(object: unknown, fixture: unknown, path = ''): string[] {
  if (Array.isArray(object) && Array.isArray(fixture))
    return object.length && fixture.length ? shapeDifferences(object[0], fixture[0], `${path}[0]`) : [];
  if (!isObject(object) || !isObject(fixture) || FREE_MAPS.has(path.split('.').at(-1)!)) return [];
  // An event's object is of its own type (checked against that type's fixture below), not the fixture event's.
  if (object.object === 'event' && isObject(object.data) && 'object' in object.data)
    return shapeDifferences({ ...object, data: {} }, { ...fixture, data: {} }, path);
  const out: string[] = [];
  for (const key of Object.keys(fixture)) if (!(key in object)) out.push(`${path}.${key} missing`);
  for (const key of Object.keys(object)) {
    if (!(key in fixture)) out.push(`${path}.${key} not in Stripe's fixture`);
    else out.push(...shapeDifferences(object[key], fixture[key], `${path}.${key}`));
  }
  return out;
}

describe("the emulator's objects", () => {
  it('are those of the API version the service pins, the fixtures', () => {
    expect([STRIPE_API_VERSION, SERVICE_VERSION, FIXTURES.apiVersion]).toEqual(Array(3).fill(Stripe.API_VERSION));
  });

  it("have the fixtures' fields, each object the service reads or the emulator sends, at every step of a subscription", async () => {
    const [priceId] = emulator.planPrices.pro;
    const open = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: priceId, quantity: 1 }],
      success_url: 'http://127.0.0.1/billing/success?session_id={CHECKOUT_SESSION_ID}',
      cancel_url: 'http://127.0.0.1/pricing',
    });
    expect(
      emulator.account.pay(open.id, { email: 'a@example.com', cardNumber: '4242424242424242', expiry: '1/40', cvc: '999' }),
    ).toHaveProperty('redirect');
    const complete = await stripe.checkout.sessions.retrieve(open.id);
    const subscription = await stripe.subscriptions.retrieve(String(complete.subscription));
    const portal = await stripe.billingPortal.sessions.create({
      customer: String(complete.customer),
      return_url: 'http://127.0.0.1/account',
    });
    const price = await stripe.prices.retrieve(priceId);
    emulator.account.changePrice(subscription.id, emulator.planPrices.business[0]);
    emulator.account.cancel(subscription.id, false);
    const events = emulator.account.state.events.map(eventObject);
    const products = [...emulator.account.state.products.values()].map((p) => ({ ...p }));
    const checked: [string, unknown][] = [
      ['checkout.session', open],
      ['checkout.session', complete],
      ['subscription', subscription],
      ['subscription_item', subscription.items.data[0]],
      ['billing_portal.session', portal],
      ['price', price],
      ['product', productObject(products[0])],
      ['customer', customerObject([...emulator.account.state.customers.values()][0])],
      ...events.map((e) => ['event', e] as [string, unknown]),
      ...events.map(
        (e) =>
          [String((e.data as { object: { object: string } }).object.object), (e.data as { object: unknown }).object] as [string, unknown],
      ),
    ];
    expect(events.map((e) => e.type)).toEqual([
      'customer.created',
      'customer.subscription.created',
      'checkout.session.completed',
      'customer.subscription.updated',
      'customer.subscription.deleted',
    ]);
    for (const [type, object] of checked) {
      // The SDK adds `lastResponse` to what it returns; Stripe's JSON has no such field.
      const { lastResponse: _r, ...json } = object as Record<string, unknown>;
      expect({ type, differences: shapeDifferences(json, FIXTURES.resources[type]) }).toEqual({ type, differences: [] });
    }
    // An update event's data holds what changed before it, as Stripe's Event reference says.
    expect(Object.keys(events[3].data as object).sort()).toEqual(['object', 'previous_attributes']);
  });
});

describe("the emulator's API", () => {
  it("refuses a wrong key (401), another API version (400) and an unknown object (404), in Stripe's error shape, through the SDK", async () => {
    const url = new URL(emulator.url);
    const stranger = new Stripe('sk_test_not_this_one', { host: url.hostname, port: url.port, protocol: 'http', maxNetworkRetries: 0 });
    await expect(stranger.prices.retrieve(emulator.planPrices.pro[0])).rejects.toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    const older = new Stripe(emulator.secretKey, {
      apiVersion: '2024-06-20' as never,
      host: url.hostname,
      port: url.port,
      protocol: 'http',
    });
    await expect(older.prices.retrieve(emulator.planPrices.pro[0])).rejects.toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    const missing = await stripe.subscriptions.retrieve('sub_DoesNotExist0000000000').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing' });
    const badPrice = await stripe.checkout.sessions
      .create({ mode: 'subscription', line_items: [{ price: 'price_nope', quantity: 1 }], success_url: 'http://127.0.0.1/s' })
      .catch((e: unknown) => e);
    expect(badPrice).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'line_items[0][price]' });
  });

  it('answers a POST repeated with the same Idempotency-Key with the first answer, making nothing new', async () => {
    const params = {
      mode: 'subscription' as const,
      line_items: [{ price: emulator.planPrices.starter[0], quantity: 1 }],
      success_url: 'http://127.0.0.1/s',
    };
    const sessions = emulator.account.state.sessions.size;
    const first = await stripe.checkout.sessions.create(params, { idempotencyKey: 'same-request' });
    const second = await stripe.checkout.sessions.create(params, { idempotencyKey: 'same-request' });
    expect(second.id).toBe(first.id);
    expect(emulator.account.state.sessions.size).toBe(sessions + 1);
  });
});

describe("the emulator's events", () => {
  it('are signed as Stripe signs them (the SDK verifies each), and retried after a failure until answered 2xx', async () => {
    const received: { status: number; body: string; signature: string }[] = [];
    let fail = 2;
    const endpoint = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const status = fail-- > 0 ? 500 : 200;
        received.push({ status, body, signature: String(req.headers['stripe-signature']) });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
    const quick = await startLocalStripe({ retrySeconds: [0.05, 0.05, 0.05] });
    try {
      quick.forwardTo(`http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hook`);
      const session = quick.account.createCheckoutSession({
        lineItems: [{ price: quick.planPrices.pro[0], quantity: 1 }],
        successUrl: 'http://127.0.0.1/s?session_id={CHECKOUT_SESSION_ID}',
        cancelUrl: null,
        clientReferenceId: null,
        customerEmail: null,
        metadata: {},
      });
      expect(
        quick.account.pay(session.id, { email: 'b@example.com', cardNumber: '4242424242424242', expiry: '12/40', cvc: '123' }),
      ).toEqual({
        redirect: `http://127.0.0.1/s?session_id=${session.id}`,
      });
      await waitFor(() => quick.pendingDeliveries() === 0, 'every event delivered');
      // Three events; the first two attempts failed and were made again.
      expect(received.filter((r) => r.status === 200)).toHaveLength(3);
      expect(received).toHaveLength(5);
      for (const r of received) {
        const event = Stripe.webhooks.constructEvent(r.body, r.signature, quick.webhookSecret, 300);
        expect(event.api_version).toBe(STRIPE_API_VERSION);
      }
      expect(() => Stripe.webhooks.constructEvent(received[0].body, received[0].signature, 'whsec_other', 300)).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
    } finally {
      await quick.close();
      endpoint.close();
    }
  });

  it('are given up after the last retry', async () => {
    const endpoint = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
    const quick = await startLocalStripe({ retrySeconds: [0.01, 0.01] });
    try {
      quick.forwardTo(`http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hook`);
      quick.account.emit('customer.created', { id: 'cus_x', object: 'customer' });
      await waitFor(() => quick.pendingDeliveries() === 0, 'the delivery given up');
      expect(quick.attempts.map((a) => a.status)).toEqual([503, 503, 503]);
    } finally {
      await quick.close();
      endpoint.close();
    }
  });
});
