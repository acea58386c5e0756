import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CardForm, EmulatedAccount } from './lifecycle.js';
import { checkoutSessionObject } from './checkout-session-object.js';
import { portalSessionObject, priceObject } from './objects.js';
import { STRIPE_API_VERSION, type EmulatedPrice } from './records.js';
import { subscriptionObject } from './subscription-objects.js';
import { checkoutPage, endedPage, portalPage } from './pages.js';
import { type EmulatorState, stripeId } from './state.js';

/** What the emulator's routes work with: its state, the account's lifecycle, its clock, and its base URL once listening. */
export interface EmulatorContext {
  state: EmulatorState;
  account: EmulatedAccount;
  now: () => number;
  /** The portal's cancellation takes effect at the period's end (else at once). */
  cancelAtPeriodEnd: boolean;
  base: () => string;
}

/** Stripe's error body: `{error: {type, message, code?, param?}}`. */
export function stripeError(reply: FastifyReply, status: number, error: { type: string; message: string; code?: string; param?: string }) {
  return reply
    .code(status)
    .send({ error: { ...error, doc_url: error.code ? `https://stripe.com/docs/error-codes/${error.code}` : undefined } });
}

const missing = (reply: FastifyReply, object: string, id: string, param = 'id') =>
  stripeError(reply, 404, { type: 'invalid_request_error', code: 'resource_missing', param, message: `No such ${object}: '${id}'` });

/** A price's product. */
const productOf = (ctx: EmulatorContext, p: EmulatedPrice) => ctx.state.products.get(p.product)!;

/**
 * The checks of every API request, as Stripe makes them: the bearer secret key, `Stripe-Version`, and a POST repeated
 * with the same `Idempotency-Key` answered as the first (Stripe keeps them 24 hours); while `failing()` gives a status,
 * every API request gets it with Stripe's error body. Each API request's method and path goes into `requests`.
 */
export function registerApiGuards(app: FastifyInstance, state: EmulatorState, requests: string[], failing: () => number | null): void {
  const idempotent = new Map<string, { status: number; body: unknown }>();
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.url.startsWith('/v1/')) return done();
    requests.push(`${request.method} ${request.url.split('?')[0]}`);
    reply.header('request-id', stripeId('req_', 14));
    if (failing() !== null)
      return void stripeError(reply, failing() as number, {
        type: 'api_error',
        message: 'An error occurred with our connection to Stripe.',
      });
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
}

/** The API calls the service makes: prices, Checkout Sessions, subscriptions, portal sessions; any other is 404. */
export function registerApiRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get('/v1/prices/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const p = ctx.state.prices.get(request.params.id);
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
      const p = ctx.state.prices.get(String(item.price));
      if (!p) return missing(reply, 'price', String(item.price), `line_items[${i}][price]`);
      lineItems.push({ price: p.id, quantity: Number(item.quantity ?? 1) });
    }
    const session = ctx.account.createCheckoutSession({
      lineItems,
      successUrl: body.success_url,
      cancelUrl: typeof body.cancel_url === 'string' ? body.cancel_url : null,
      clientReferenceId: typeof body.client_reference_id === 'string' ? body.client_reference_id : null,
      customerEmail: typeof body.customer_email === 'string' ? body.customer_email : null,
      metadata: typeof body.metadata === 'object' && body.metadata ? (body.metadata as Record<string, string>) : {},
    });
    return checkoutSessionObject(session, `${ctx.base()}/c/pay/${session.id}`, ctx.account.price);
  });

  app.get('/v1/checkout/sessions/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const session = ctx.state.sessions.get(request.params.id);
    return session
      ? checkoutSessionObject(session, `${ctx.base()}/c/pay/${session.id}`, ctx.account.price)
      : missing(reply, 'checkout.session', request.params.id);
  });

  app.get('/v1/subscriptions/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const sub = ctx.state.subscriptions.get(request.params.id);
    return sub ? subscriptionObject(sub, ctx.account.price) : missing(reply, 'subscription', request.params.id);
  });

  app.post('/v1/billing_portal/sessions', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const customer = ctx.state.customers.get(String(body.customer ?? ''));
    if (!customer) return missing(reply, 'customer', String(body.customer ?? ''), 'customer');
    const portal = {
      id: stripeId('bps_', 24),
      created: Math.floor(ctx.now() / 1000),
      customer: customer.id,
      returnUrl: typeof body.return_url === 'string' ? body.return_url : null,
      secret: stripeId('', 32),
    };
    ctx.state.portalSessions.set(portal.id, portal);
    ctx.state.save();
    return portalSessionObject(portal, `${ctx.base()}/p/session/${portal.secret}`, ctx.state.portalConfiguration);
  });

  app.all('/v1/*', async (request, reply) =>
    stripeError(reply, 404, {
      type: 'invalid_request_error',
      message: `Unrecognized request URL (${request.method}: ${request.url.split('?')[0]}). The local emulator answers only the calls the service makes.`,
    }),
  );
}

/** Checkout's page (the session's items, a card form) and the customer portal (plan change, cancellation). */
export function registerPageRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  // Checkout's page: the session's items, a card form; a paid session goes to its success URL.
  const checkoutItems = (lineItems: { price: string }[]) =>
    lineItems.map((li) => ({ price: ctx.account.price(li.price), product: productOf(ctx, ctx.account.price(li.price)) }));
  app.get('/c/pay/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const session = ctx.state.sessions.get(request.params.id);
    reply.type('text/html; charset=utf-8');
    if (session?.status !== 'open') return reply.code(404).send(endedPage('This checkout session is no longer available.'));
    return checkoutPage(session, checkoutItems(session.lineItems), {});
  });
  app.post('/c/pay/:id', async (request: FastifyRequest<{ Params: { id: string }; Body: CardForm }>, reply) => {
    const outcome = ctx.account.pay(request.params.id, request.body ?? {});
    if ('redirect' in outcome) return reply.redirect(outcome.redirect, 303);
    const session = ctx.state.sessions.get(request.params.id);
    // Checkout shows a declined card on its page, which loads as any other.
    reply.type('text/html; charset=utf-8');
    if (session?.status !== 'open') return endedPage(outcome.error);
    return checkoutPage(session, checkoutItems(session.lineItems), { email: request.body?.email, error: outcome.error });
  });

  // The customer portal: the customer's subscriptions, a plan change among the catalogue's prices, a cancellation.
  const portalOf = (secret: string) => [...ctx.state.portalSessions.values()].find((p) => p.secret === secret);
  const showPortal = (secret: string) => {
    const portal = portalOf(secret)!;
    const customer = ctx.state.customers.get(portal.customer)!;
    return portalPage({
      secret,
      email: customer.email,
      returnUrl: portal.returnUrl,
      subscriptions: [...ctx.state.subscriptions.values()]
        .filter((s) => s.customer === customer.id)
        .map((sub) => ({
          sub,
          price: ctx.account.price(sub.items[0].price),
          product: productOf(ctx, ctx.account.price(sub.items[0].price)),
        })),
      choices: [...ctx.state.prices.values()].map((p) => ({ price: p, product: productOf(ctx, p) })),
      cancelAtPeriodEnd: ctx.cancelAtPeriodEnd,
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
      const sub = ctx.state.subscriptions.get(request.body?.subscription ?? '');
      reply.type('text/html; charset=utf-8');
      if (!portal || !sub || sub.customer !== portal.customer || sub.status === 'canceled')
        return reply.code(404).send(endedPage('This subscription cannot be changed here.'));
      if (request.params.action === 'update' && ctx.state.prices.get(request.body?.price ?? ''))
        ctx.account.changePrice(sub.id, request.body!.price!);
      else if (request.params.action === 'cancel') ctx.account.cancel(sub.id, ctx.cancelAtPeriodEnd);
      else return reply.code(400).send(endedPage('Choose a plan.'));
      return reply.redirect(`/p/session/${request.params.secret}`, 303);
    },
  );
}
