import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { PAID_PLANS, PLANS, type Config, type Plan } from '../../config.js';
import { type Billing, PlanNotSold } from '../../billing/billing.js';
import { EventRejected, type ProviderPrice } from '../../billing/provider.js';
import { ReadMemo } from '../../lib/read-memo.js';
import { sendPage, sendProblemPage, wantsHtml } from '../pages/html.js';
import { providerProblem } from '../plugins/errors.js';
import { keyAlreadyShownPage, keyShownPage, type PlanOffer, pricingPage } from '../pages/billing-pages.js';
import { Problem, invalidParams } from '../problem.js';

/** How long the plans' prices read from the provider are reused by the pricing page: a public page must not spend the provider's rate limit. */
const PRICES_SECONDS = 300;

/** A checkout session id as Stripe writes it (`cs_test_...`, `cs_live_...`). */
const SESSION_ID = /^cs_(test|live)_[A-Za-z0-9]{1,250}$/;

/**
 * The base address the provider sends people back to: `PUBLIC_URL`, else the request's own scheme and host (which a
 * proxy's `X-Forwarded-*` set when `TRUST_PROXY` is on).
 */
export function baseUrlOf(request: FastifyRequest, config: Config): string {
  return config.billing.publicUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * Pages and problems for the routes outside /v1 that people's browsers reach: a problem is a page for a browser and a
 * problem document for any other client; the provider's failure is 502 PAYMENT_PROVIDER_ERROR.
 */
export function registerPageErrors(scope: FastifyInstance, billing: Billing): void {
  scope.setErrorHandler((error, request, reply) => {
    const problem = error instanceof Problem ? error : providerProblem(error);
    if (problem && wantsHtml(request)) return sendProblemPage(reply, problem, billing.provider.redirectOrigins);
    // The app's own handler answers the rest, and any problem to a client that is not a browser.
    throw error;
  });
}

/** Each plan's offer on /pricing: its limits, the endpoints it adds to the plan below, its prices (`known`: as Stripe has them). */
function planOffers(app: FastifyInstance, deps: { billing: Billing; config: Config }, known: Map<string, ProviderPrice>): PlanOffer[] {
  const { billing, config } = deps;
  const routes = app.routeIndex
    .routes()
    .filter((r) => r.method === 'GET' && r.url.startsWith('/v1/') && !r.hidden && r.access !== 'public');
  const reaches = (plan: Plan) =>
    routes.filter((r) => (plan === 'free' ? r.access === 'anonymous' : PLANS.indexOf(r.minPlan ?? 'free') <= PLANS.indexOf(plan)));
  return PLANS.map((plan, i) => {
    const before = i > 0 ? new Set(reaches(PLANS[i - 1]).map((r) => r.url)) : new Set<string>();
    return {
      plan,
      limits: config.plans[plan],
      adds: reaches(plan)
        .filter((r) => !before.has(r.url))
        .map((r) => ({ path: r.url.replace(/:(\w+)/g, '{$1}'), summary: r.summary ?? '' })),
      prices: billing.pricesOf(plan).map((id) => known.get(id) ?? { id }),
    };
  });
}

/**
 * The answer of /billing/success for a checkout: its key, shown once (a page, or JSON), or why it cannot be.
 * @throws Problem 410 KEY_ALREADY_SHOWN, CHECKOUT_NOT_PAID, PLAN_NOT_SOLD or NOT_FOUND.
 */
async function checkoutAnswer(billing: Billing, request: FastifyRequest<{ Querystring: { session_id: string } }>, reply: FastifyReply) {
  const result = await billing.checkoutResult(request.query.session_id);
  const asPage = wantsHtml(request);
  const forms = billing.provider.redirectOrigins;
  switch (result.state) {
    case 'shown':
      if (!asPage) return reply.header('Cache-Control', 'no-store').send({ data: { key: result.key, plan: result.plan } });
      return sendPage(reply, 'Your API key', keyShownPage(result.key, result.plan), { formTargets: forms });
    case 'already-shown':
      if (asPage) return sendPage(reply, 'Key shown already', keyAlreadyShownPage(result.revealedAt), { status: 410, formTargets: forms });
      throw new Problem(
        'KEY_ALREADY_SHOWN',
        `This checkout's key was shown${result.revealedAt ? ` at ${result.revealedAt}` : ''} and cannot be shown again. Rotate it at /account to get a new one.`,
      );
    case 'not-paid':
      throw new Problem(
        'CHECKOUT_NOT_PAID',
        'This checkout is not paid (yet): no key is issued before it is. Finish it, or start again at /pricing.',
      );
    case 'no-plan':
      throw new Problem(
        'PLAN_NOT_SOLD',
        "This checkout's price is not one of this service's plans: no key is issued. Ask the service's operator.",
      );
    default:
      throw new Problem('NOT_FOUND', 'No subscription checkout has this session id.');
  }
}

/**
 * The storefront, outside the read-only /v1 (docs/billing.md): GET /pricing, POST /billing/checkout (303 to the
 * provider's checkout), GET /billing/success (the new key, shown once; `Accept: application/json` answers
 * `{data: {key, plan}}`), and POST /billing/stripe/webhook (signed events, each applied once). All are public:
 * none reads a key.
 */
export function registerBillingRoutes(app: FastifyInstance, deps: { billing: Billing; config: Config }): void {
  const { billing, config } = deps;
  const prices = new ReadMemo<Map<string, ProviderPrice>>(
    PRICES_SECONDS,
    () => 0,
    async () => {
      const ids = PAID_PLANS.flatMap((plan) => billing.pricesOf(plan));
      const read = await Promise.all(ids.map((id) => billing.provider.price(id)));
      return new Map(read.filter((p) => p !== null).map((p) => [p.id, p]));
    },
  );
  const access = { access: 'public' as const };

  app.register(async (scope) => {
    await scope.register(formbody);
    registerPageErrors(scope, billing);

    scope.get('/pricing', { config: access, schema: { hide: true } }, async (_request, reply) => {
      const known = await prices.get().catch(() => new Map<string, ProviderPrice>());
      const offers = planOffers(app, deps, known);
      return sendPage(reply, 'Plans', pricingPage(offers), { formTargets: billing.provider.redirectOrigins });
    });

    scope.post(
      '/billing/checkout',
      {
        config: access,
        schema: {
          hide: true,
          body: Type.Object({ plan: Type.String(), price: Type.Optional(Type.String()) }, { additionalProperties: false }),
        },
      },
      async (request: FastifyRequest<{ Body: { plan: string; price?: string } }>, reply) => {
        const { plan, price } = request.body;
        if (!(PAID_PLANS as readonly string[]).includes(plan))
          throw invalidParams([{ name: 'plan', in: 'body', message: `must be one of ${PAID_PLANS.join(', ')}` }]);
        try {
          return reply.redirect(await billing.startCheckout(plan, price, baseUrlOf(request, config)), 303);
        } catch (error) {
          if (error instanceof PlanNotSold)
            throw new Problem(
              'PLAN_NOT_SOLD',
              `${error.message}: no Stripe price is configured for it (STRIPE_PRICE_${plan.toUpperCase()}).`,
            );
          throw error;
        }
      },
    );

    scope.get(
      '/billing/success',
      {
        config: access,
        schema: {
          hide: true,
          querystring: Type.Object({ session_id: Type.String({ pattern: SESSION_ID.source }) }, { additionalProperties: false }),
        },
      },
      async (request: FastifyRequest<{ Querystring: { session_id: string } }>, reply: FastifyReply) => {
        return checkoutAnswer(billing, request, reply);
      },
    );
  });

  registerStripeWebhook(app, billing);
}

/** POST /billing/stripe/webhook: a signed event, applied once; 400 BAD_REQUEST when malformed, WEBHOOK_SIGNATURE_INVALID when its signature fails. */
function registerStripeWebhook(app: FastifyInstance, billing: Billing): void {
  const access = { access: 'public' as const };
  // The webhook reads its body as bytes: the signature is over the body exactly as sent.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post('/billing/stripe/webhook', { config: access, schema: { hide: true } }, async (request, reply) => {
      const signature = request.headers['stripe-signature'];
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      try {
        const outcome = await billing.handleEvent(body, typeof signature === 'string' ? signature : undefined);
        return reply.send({ received: true, outcome });
      } catch (error) {
        if (!(error instanceof EventRejected)) throw error;
        throw error.reason === 'malformed'
          ? new Problem('BAD_REQUEST', `The event was not applied: ${error.message}.`)
          : new Problem('WEBHOOK_SIGNATURE_INVALID', `The event was not applied: ${error.message}.`);
      }
    });
  });
}
