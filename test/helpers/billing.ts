import Stripe from 'stripe';
import type { TestRuntime } from './runtime.js';
import { waitFor } from './wait.js';

/** The service's form of a checkout's outcome: what the success page answers as JSON. */
export interface Bought {
  key: string;
  plan: string;
  sessionId: string;
  subscriptionId: string;
}

/** The runtime's local Stripe emulator. @throws Error when it has none */
export function emulatorOf(rt: TestRuntime) {
  if (!rt.stripe) throw new Error('this runtime started no Stripe emulator');
  return rt.stripe;
}

/** POST /billing/checkout for `plan` through the real app: the id of the Checkout Session it sends the browser to. */
export async function checkoutSession(rt: TestRuntime, plan: string): Promise<string> {
  const checkout = await rt.app.inject({
    method: 'POST',
    url: '/billing/checkout',
    payload: `plan=${plan}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'service.test' },
  });
  if (checkout.statusCode !== 303) throw new Error(`checkout: ${checkout.statusCode} ${checkout.body}`);
  return new URL(String(checkout.headers.location)).pathname.split('/').pop()!;
}

/** Pays the session on the emulator's Checkout with `card` (Stripe's test card that works by default). */
export function payWith(rt: TestRuntime, sessionId: string, card = '4242424242424242'): { redirect: string } | { error: string } {
  return emulatorOf(rt).account.pay(sessionId, { email: 'subscriber@example.com', cardNumber: card, expiry: '12 / 34', cvc: '123' });
}

/** GET /billing/success of a session as JSON: status and body. */
export async function successOf(rt: TestRuntime, sessionId: string): Promise<{ status: number; body: any }> {
  const res = await rt.app.inject({
    method: 'GET',
    url: `/billing/success?session_id=${sessionId}`,
    headers: { accept: 'application/json' },
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

/**
 * Buys `plan` as a person would, without a browser: POST /billing/checkout (303 to the emulator's Checkout), the card
 * paid on the emulator, then the success page asked for JSON. Every step through the real app and the real emulator.
 */
export async function buy(rt: TestRuntime, plan: string, card = '4242424242424242'): Promise<Bought> {
  const sessionId = await checkoutSession(rt, plan);
  const paid = payWith(rt, sessionId, card);
  if ('error' in paid) throw new Error(`payment: ${paid.error}`);
  const success = await successOf(rt, sessionId);
  if (success.status !== 200) throw new Error(`success: ${success.status} ${JSON.stringify(success.body)}`);
  const { key, plan: bought } = success.body.data as { key: string; plan: string };
  const subscriptionId = emulatorOf(rt).account.state.sessions.get(sessionId)!.subscription!;
  return { key, plan: bought, sessionId, subscriptionId };
}

/**
 * POSTs `event` to the service's webhook, signed with the SDK's test header (`secret`: the runtime's own by default;
 * `timestamp`: Unix seconds, now by default). Returns the status and body.
 */
export async function sendEvent(
  rt: TestRuntime,
  event: Record<string, unknown> | string,
  options: { secret?: string; timestamp?: number; signature?: string | null } = {},
): Promise<{ status: number; body: any }> {
  const payload = typeof event === 'string' ? event : JSON.stringify(event);
  const header =
    options.signature === null
      ? undefined
      : (options.signature ??
        Stripe.webhooks.generateTestHeaderString({
          payload,
          secret: options.secret ?? rt.config.billing.stripe.webhookSecret!,
          timestamp: options.timestamp,
        }));
  const res = await rt.app.inject({
    method: 'POST',
    url: '/billing/stripe/webhook',
    payload,
    headers: { 'content-type': 'application/json', ...(header ? { 'stripe-signature': header } : {}) },
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
}

/** An event as Stripe writes one, about `object` (`{id, object: 'subscription'}` or a checkout session). */
export function eventAbout(type: string, object: Record<string, unknown>, id = `evt_test_${Math.random().toString(36).slice(2)}`) {
  return {
    id,
    object: 'event',
    api_version: '2026-07-29.dahlia',
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

/** A metric's value in the runtime's registry for these labels (0 when never moved). */
export async function metricValue(rt: TestRuntime, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await rt.metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = (metric?.values as { labels: Record<string, string>; value: number }[] | undefined)?.find((v) =>
    Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return value?.value ?? 0;
}

/** Waits until the emulator has no delivery left to make (each delivered, or given up). */
export async function deliveriesSettled(rt: TestRuntime): Promise<void> {
  await waitFor(() => emulatorOf(rt).pendingDeliveries() === 0, 'every Stripe event delivered');
}
