import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import qs from 'qs';
import { type DeliveryAttempt, EventDelivery } from './delivery.js';
import { EmulatedAccount } from './lifecycle.js';
import { STRIPE_API_VERSION } from './records.js';
import { EmulatorState } from './state.js';

import { type EmulatorContext, registerApiGuards, registerApiRoutes, registerPageRoutes } from './routes.js';
/** The local Stripe emulator, on loopback: the API calls the service makes, Checkout, the customer portal, and events. */
export interface LocalStripe {
  /** Its base URL: the API (`STRIPE_API_URL`) and the pages. */
  url: string;
  /** Its secret API key and webhook signing secret (what `STRIPE_SECRET_KEY` and `STRIPE_WEBHOOK_SECRET` would hold). */
  secretKey: string;
  webhookSecret: string;
  /** Its catalogue's price ids of each paid plan (what `STRIPE_PRICE_*` would hold), monthly first. */
  planPrices: Record<'starter' | 'pro' | 'business', string[]>;
  /** What happens in the account: pay a session, change or cancel a subscription, set a status (tests). */
  account: EmulatedAccount;
  /** Every event delivery attempt made. */
  attempts: DeliveryAttempt[];
  /** Deliveries waiting for their next attempt. */
  pendingDeliveries: () => number;
  /** Sends every later event to `url` (a webhook endpoint). */
  forwardTo: (url: string) => void;
  /** Answers every API request with this status and Stripe's error body until set back to null (tests). */
  failWith: (status: number | null) => void;
  /** The method and path of every API request answered, in order. */
  requests: string[];
  close: () => Promise<void>;
}

export interface LocalStripeOptions {
  host?: string;
  port?: number;
  /** Where its state is kept across restarts; null: in memory. */
  stateFile?: string | null;
  /** Waits before each retry of a failed event delivery, seconds (default: three over two and a half hours). */
  retrySeconds?: number[];
  /** How long a delivery waits for an answer, seconds. */
  timeoutSeconds?: number;
  /** The customer portal's cancellation: at once (default) or at the period's end, as a portal configuration sets it. */
  cancelMode?: 'immediately' | 'at_period_end';
  /** Unix milliseconds now (tests move it). */
  now?: () => number;
}

/**
 * Starts the local Stripe emulator (docs/billing.md). It answers what the service asks of Stripe (prices, Checkout
 * Sessions, subscriptions, customer portal sessions) with objects of Stripe's shapes at {@link STRIPE_API_VERSION},
 * form-encoded requests as Stripe reads them, a bearer secret key, `Stripe-Version` checked, `Idempotency-Key`
 * honoured; a Checkout page and a customer portal page; and events signed and retried as Stripe sends them.
 */
export async function startLocalStripe(options: LocalStripeOptions = {}): Promise<LocalStripe> {
  const now = options.now ?? Date.now;
  const state = new EmulatorState(options.stateFile ?? null, now());
  const delivery = new EventDelivery(state, {
    retrySeconds: options.retrySeconds ?? [300, 1800, 7200],
    timeoutSeconds: options.timeoutSeconds ?? 10,
    now,
  });
  const cancelAtPeriodEnd = options.cancelMode === 'at_period_end';
  const app = Fastify({ logger: false });
  await app.register(formbody, { parser: (text) => qs.parse(text, { depth: 5, arrayLimit: 100 }) as Record<string, unknown> });
  let base = '';
  const account = new EmulatedAccount(state, delivery, now, (id) => `${base}/c/pay/${id}`);
  let failing: number | null = null;
  const requests: string[] = [];

  registerApiGuards(app, state, requests, () => failing);
  const context: EmulatorContext = { state, account, now, cancelAtPeriodEnd, base: () => base };
  registerApiRoutes(app, context);
  registerPageRoutes(app, context);

  base = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  return {
    url: base,
    secretKey: state.secretKey,
    webhookSecret: state.webhookSecret,
    planPrices: state.planPrices(),
    account,
    attempts: delivery.attempts,
    pendingDeliveries: () => delivery.pending(),
    forwardTo: (url) => delivery.addEndpoint(url),
    failWith: (status) => {
      failing = status;
    },
    requests,
    close: async () => {
      delivery.close();
      await app.close();
    },
  };
}
