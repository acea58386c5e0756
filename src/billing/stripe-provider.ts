import Stripe from 'stripe';
import {
  BillingProviderError,
  EventRejected,
  type ProviderCheckout,
  type ProviderEvent,
  type ProviderPrice,
  type ProviderSubscription,
  type SubscriptionProvider,
} from './provider.js';

/** The Stripe API version the service is written against (the SDK's pinned one; the emulator answers it alone). */
export const STRIPE_API_VERSION = '2026-07-29.dahlia';

/** Seconds a signed event's timestamp may be old: Stripe's own default, against replays. */
const SIGNATURE_TOLERANCE_SECONDS = 300;

const iso = (seconds: number | null | undefined): string | null => (seconds ? new Date(seconds * 1000).toISOString() : null);

/**
 * Stripe Billing through the official `stripe` package, at {@link STRIPE_API_VERSION}, against `apiUrl` (Stripe's own,
 * or an emulator's). A call that fails for want of an answer (the network, a timeout, 5xx, 429) is retried twice by the
 * SDK and then raised as BillingProviderError; a 404 reads as none. Events are verified by the SDK's `constructEvent`.
 */
export class StripeProvider implements SubscriptionProvider {
  readonly name = 'stripe';
  readonly redirectOrigins: string[];
  private readonly stripe: Stripe;

  constructor(
    private readonly options: {
      secretKey: string;
      webhookSecret: string | null;
      apiUrl: string;
      /** Now, for the signature's tolerance (tests move it). */
      clock: () => Date;
    },
  ) {
    const url = new URL(options.apiUrl);
    this.stripe = new Stripe(options.secretKey, {
      apiVersion: STRIPE_API_VERSION,
      host: url.hostname,
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
      protocol: url.protocol === 'https:' ? 'https' : 'http',
      maxNetworkRetries: 2,
      timeout: 10_000,
      telemetry: false,
      appInfo: { name: 'nyc-listings' },
    });
    // Stripe's hosted pages; an emulator serves its pages from its own address.
    this.redirectOrigins = url.hostname === 'api.stripe.com' ? ['https://checkout.stripe.com', 'https://billing.stripe.com'] : [url.origin];
  }

  /** Runs a call; a resource Stripe does not have is null, any other failure a BillingProviderError. */
  private async call<T>(what: string, run: () => Promise<T>): Promise<T | null> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404) return null;
      const message = error instanceof Error ? error.message : String(error);
      throw new BillingProviderError(`Stripe: ${what} failed: ${message}`);
    }
  }

  async startCheckout(input: { priceId: string; successUrl: string; cancelUrl: string }): Promise<{ url: string }> {
    const session = await this.call('creating a checkout session', () =>
      this.stripe.checkout.sessions.create({
        mode: 'subscription',
        line_items: [{ price: input.priceId, quantity: 1 }],
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
      }),
    );
    if (!session?.url)
      throw new BillingProviderError(`Stripe: the price ${input.priceId} could not be sold (no such price, or no checkout page)`);
    return { url: session.url };
  }

  async checkout(id: string): Promise<ProviderCheckout | null> {
    const session = await this.call('reading a checkout session', () => this.stripe.checkout.sessions.retrieve(id));
    if (!session) return null;
    const idOf = (v: string | { id: string } | null) => (v === null ? null : typeof v === 'string' ? v : v.id);
    return {
      id: session.id,
      paid: session.status === 'complete' && (session.payment_status === 'paid' || session.payment_status === 'no_payment_required'),
      subscriptionMode: session.mode === 'subscription',
      subscriptionId: idOf(session.subscription),
      customerId: idOf(session.customer),
    };
  }

  async subscription(id: string): Promise<ProviderSubscription | null> {
    const sub = await this.call('reading a subscription', () => this.stripe.subscriptions.retrieve(id));
    if (!sub) return null;
    const items = sub.items.data;
    return {
      id: sub.id,
      customerId: typeof sub.customer === 'string' ? sub.customer : sub.customer.id,
      status: sub.status,
      priceIds: items.map((item) => item.price.id),
      // Since API version 2025-03-31 a period is each item's.
      currentPeriodEnd: iso(items.length ? Math.max(...items.map((item) => item.current_period_end)) : null),
      cancelAt: iso(sub.cancel_at),
      endedAt: iso(sub.ended_at),
    };
  }

  async portal(customerId: string, returnUrl: string): Promise<{ url: string }> {
    const session = await this.call('opening the customer portal', () =>
      this.stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }),
    );
    if (!session) throw new BillingProviderError(`Stripe: no customer ${customerId}`);
    return { url: session.url };
  }

  async price(id: string): Promise<ProviderPrice | null> {
    const price = await this.call('reading a price', () => this.stripe.prices.retrieve(id));
    return price
      ? { id: price.id, unitAmount: price.unit_amount, currency: price.currency, interval: price.recurring?.interval ?? null }
      : null;
  }

  verifyEvent(body: Buffer, header: string | undefined): ProviderEvent {
    if (!this.options.webhookSecret) throw new EventRejected('signature', 'no STRIPE_WEBHOOK_SECRET is set: no event can be verified');
    if (!header) throw new EventRejected('unsigned', 'the request has no Stripe-Signature header');
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(
        body,
        header,
        this.options.webhookSecret,
        SIGNATURE_TOLERANCE_SECONDS,
        undefined,
        this.options.clock().getTime(),
      );
    } catch (error) {
      if (error instanceof Stripe.errors.StripeSignatureVerificationError)
        throw new EventRejected('signature', `the Stripe-Signature does not verify: ${error.message.split('\n')[0]}`);
      throw new EventRejected('malformed', 'the body is not an event (not JSON)');
    }
    const object = (event as { data?: { object?: { id?: unknown; object?: unknown } } }).data?.object;
    if (typeof event.id !== 'string' || typeof event.type !== 'string' || typeof object?.id !== 'string')
      throw new EventRejected('malformed', 'the body is not an event (no id, type or object)');
    return {
      id: event.id,
      type: event.type,
      created: iso(event.created) ?? this.options.clock().toISOString(),
      checkoutSessionId: object.object === 'checkout.session' ? object.id : null,
      subscriptionId: object.object === 'subscription' ? object.id : null,
    };
  }
}
