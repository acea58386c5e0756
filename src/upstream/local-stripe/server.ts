import formbody from '@fastify/formbody';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import qs from 'qs';
import { type DeliveryAttempt, EventDelivery } from './delivery.js';
import { type CardForm, EmulatedAccount } from './lifecycle.js';
import { checkoutSessionObject } from './checkout-session-object.js';
import { portalSessionObject, priceObject } from './objects.js';
import { STRIPE_API_VERSION, type EmulatedPrice } from './records.js';
import { subscriptionObject } from './subscription-objects.js';
import { checkoutPage, endedPage, portalPage } from './pages.js';
import { EmulatorState, stripeId } from './state.js';

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

/** Stripe's error body: `{error: {type, message, code?, param?}}`. */
function stripeError(reply: FastifyReply, status: number, error: { type: string; message: string; code?: string; param?: string }) {
  return reply
    .code(status)
    .send({ error: { ...error, doc_url: error.code ? `https://stripe.com/docs/error-codes/${error.code}` : undefined } });
}

const missing = (reply: FastifyReply, object: string, id: string, param = 'id') =>
  stripeError(reply, 404, { type: 'invalid_request_error', code: 'resource_missing', param, message: `No such ${object}: '${id}'` });

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
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const price = (id: string) => state.prices.get(id);
  const productOf = (p: EmulatedPrice) => state.products.get(p.product)!;

  app.addHook('onRequest', (request, reply, done) => {
    if (!request.url.startsWith('/v1/')) return done();
    requests.push(`${request.method} ${request.url.split('?')[0]}`);
    reply.header('request-id', stripeId('req_', 14));
    if (failing !== null)
      return void stripeError(reply, failing, { type: 'api_error', message: 'An error occurred with our connection to Stripe.' });
    const auth = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '');
    if (!auth || auth[1] !== state.secretKey) {
      const shown = auth ? `${auth[1].slice(0, 8)}${'*'.repeat(Math.max(0, auth[1].length - 12))}${auth[1].slice(-4)}` : '';
      return void stripeError(reply, 401, {
        type: 'invalid_request_error',
        message: auth ? `Invalid API Key provided: ${shown}` : 'You did not provide an API key.',
      });
    }
    const version = request.headers['stripe-version'];
    if (version !== undefined && version !== STRIPE_API_VERSION) {
      // Stripe answers older versions in their own shapes; the emulator knows only this one.
      return void stripeError(reply, 400, {
        type: 'invalid_request_error',
        message: `The local emulator answers API version ${STRIPE_API_VERSION} only, not ${String(version)}.`,
      });
    }
    done();
  });
  // A POST repeated with the same Idempotency-Key gets the first answer (Stripe keeps them 24 hours).
  app.addHook('preHandler', (request, reply, done) => {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || typeof key !== 'string' || !request.url.startsWith('/v1/')) return done();
    const seen = idempotent.get(key);
    if (seen) return void reply.code(seen.status).header('idempotent-replayed', 'true').send(seen.body);
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const key = request.headers['idempotency-key'];
    if (
      request.method === 'POST' &&
      typeof key === 'string' &&
      request.url.startsWith('/v1/') &&
      !idempotent.has(key) &&
      reply.statusCode < 500
    )
      idempotent.set(key, { status: reply.statusCode, body: JSON.parse(String(payload)) });
    done(null, payload);
  });

  app.get('/v1/prices/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const p = price(request.params.id);
    return p ? priceObject(p) : missing(reply, 'price', request.params.id);
  });

  app.post('/v1/checkout/sessions', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const invalid = (param: string, message: string) =>
      stripeError(reply, 400, { type: 'invalid_request_error', code: 'parameter_invalid', param, message });
    if (body.mode !== 'subscription') return invalid('mode', 'The local emulator makes Checkout Sessions in subscription mode only.');
    if (typeof body.success_url !== 'string' || !/^https?:\/\//.test(body.success_url)) return invalid('success_url', 'Not a valid URL');
    const items = Array.isArray(body.line_items) ? (body.line_items as Record<string, unknown>[]) : [];
    if (!items.length)
      return stripeError(reply, 400, {
        type: 'invalid_request_error',
        code: 'parameter_missing',
        param: 'line_items',
        message: 'Missing required param: line_items.',
      });
    const lineItems: { price: string; quantity: number }[] = [];
    for (const [i, item] of items.entries()) {
      const p = price(String(item.price));
      if (!p) return missing(reply, 'price', String(item.price), `line_items[${i}][price]`);
      lineItems.push({ price: p.id, quantity: Number(item.quantity ?? 1) });
    }
    const session = account.createCheckoutSession({
      lineItems,
      successUrl: body.success_url,
      cancelUrl: typeof body.cancel_url === 'string' ? body.cancel_url : null,
      clientReferenceId: typeof body.client_reference_id === 'string' ? body.client_reference_id : null,
      customerEmail: typeof body.customer_email === 'string' ? body.customer_email : null,
      metadata: typeof body.metadata === 'object' && body.metadata ? (body.metadata as Record<string, string>) : {},
    });
    return checkoutSessionObject(session, `${base}/c/pay/${session.id}`, account.price);
  });

  app.get('/v1/checkout/sessions/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const session = state.sessions.get(request.params.id);
    return session
      ? checkoutSessionObject(session, `${base}/c/pay/${session.id}`, account.price)
      : missing(reply, 'checkout.session', request.params.id);
  });

  app.get('/v1/subscriptions/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const sub = state.subscriptions.get(request.params.id);
    return sub ? subscriptionObject(sub, account.price) : missing(reply, 'subscription', request.params.id);
  });

  app.post('/v1/billing_portal/sessions', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const customer = state.customers.get(String(body.customer ?? ''));
    if (!customer) return missing(reply, 'customer', String(body.customer ?? ''), 'customer');
    const portal = {
      id: stripeId('bps_', 24),
      created: Math.floor(now() / 1000),
      customer: customer.id,
      returnUrl: typeof body.return_url === 'string' ? body.return_url : null,
      secret: stripeId('', 32),
    };
    state.portalSessions.set(portal.id, portal);
    state.save();
    return portalSessionObject(portal, `${base}/p/session/${portal.secret}`, state.portalConfiguration);
  });

  app.all('/v1/*', async (request, reply) =>
    stripeError(reply, 404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${request.method}: ${request.url.split('?')[0]}). The local emulator answers only the calls the service makes.`,
    }),
  );

  // Checkout's page: the session's items, a card form; a paid session goes to its success URL.
  const checkoutItems = (lineItems: { price: string }[]) =>
    lineItems.map((li) => ({ price: account.price(li.price), product: productOf(account.price(li.price)) }));
  app.get('/c/pay/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const session = state.sessions.get(request.params.id);
    reply.type('text/html; charset=utf-8');
    if (session?.status !== 'open') return reply.code(404).send(endedPage('This checkout session is no longer available.'));
    return checkoutPage(session, checkoutItems(session.lineItems), {});
  });
  app.post('/c/pay/:id', async (request: FastifyRequest<{ Params: { id: string }; Body: CardForm }>, reply) => {
    const outcome = account.pay(request.params.id, request.body ?? {});
    if ('redirect' in outcome) return reply.redirect(outcome.redirect, 303);
    const session = state.sessions.get(request.params.id);
    // Checkout shows a declined card on its page, which loads as any other.
    reply.type('text/html; charset=utf-8');
    if (session?.status !== 'open') return endedPage(outcome.error);
    return checkoutPage(session, checkoutItems(session.lineItems), { email: request.body?.email, error: outcome.error });
  });

  // The customer portal: the customer's subscriptions, a plan change among the catalogue's prices, a cancellation.
  const portalOf = (secret: string) => [...state.portalSessions.values()].find((p) => p.secret === secret);
  const showPortal = (secret: string) => {
    const portal = portalOf(secret)!;
    const customer = state.customers.get(portal.customer)!;
    return portalPage({
      secret,
      email: customer.email,
      returnUrl: portal.returnUrl,
      subscriptions: [...state.subscriptions.values()]
        .filter((s) => s.customer === customer.id)
        .map((sub) => ({ sub, price: account.price(sub.items[0].price), product: productOf(account.price(sub.items[0].price)) })),
      choices: [...state.prices.values()].map((p) => ({ price: p, product: productOf(p) })),
      cancelAtPeriodEnd,
    });
  };
  app.get('/p/session/:secret', async (request: FastifyRequest<{ Params: { secret: string } }>, reply) => {
    reply.type('text/html; charset=utf-8');
    if (!portalOf(request.params.secret)) return reply.code(404).send(endedPage('This portal session is no longer available.'));
    return showPortal(request.params.secret);
  });
  app.post(
    '/p/session/:secret/:action',
    async (
      request: FastifyRequest<{ Params: { secret: string; action: string }; Body: { subscription?: string; price?: string } }>,
      reply,
    ) => {
      const portal = portalOf(request.params.secret);
      const sub = state.subscriptions.get(request.body?.subscription ?? '');
      reply.type('text/html; charset=utf-8');
      if (!portal || !sub || sub.customer !== portal.customer || sub.status === 'canceled')
        return reply.code(404).send(endedPage('This subscription cannot be changed here.'));
      if (request.params.action === 'update' && price(request.body?.price ?? '')) account.changePrice(sub.id, request.body!.price!);
      else if (request.params.action === 'cancel') account.cancel(sub.id, cancelAtPeriodEnd);
      else return reply.code(400).send(endedPage('Choose a plan.'));
      return reply.redirect(`/p/session/${request.params.secret}`, 303);
    },
  );

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
