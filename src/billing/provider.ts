/**
 * What the service needs of a subscription provider (Stripe Billing today; Paddle or Lemon Squeezy could stand behind
 * the same interface): start a checkout, read a checkout and a subscription as they are now, open the provider's
 * customer portal, read a price for the pricing page, and verify a signed event. Instants are UTC ISO 8601.
 */
export interface SubscriptionProvider {
  /** The provider's name, as `billing_subscriptions.provider` and the logs say it. */
  readonly name: string;
  /** The origins a person's browser is sent to (its checkout and portal pages): the pages' `form-action` allows them. */
  readonly redirectOrigins: string[];
  /**
   * A hosted checkout for a subscription to `priceId`; the person comes back to `successUrl`, where
   * `{CHECKOUT_SESSION_ID}` is replaced by the session's id, or to `cancelUrl`. @throws BillingProviderError
   */
  startCheckout(input: { priceId: string; successUrl: string; cancelUrl: string }): Promise<{ url: string }>;
  /** The checkout session `id` as it is now; null when the provider has none. @throws BillingProviderError */
  checkout(id: string): Promise<ProviderCheckout | null>;
  /** The subscription `id` as it is now; null when the provider has none. @throws BillingProviderError */
  subscription(id: string): Promise<ProviderSubscription | null>;
  /** A session of the provider's customer portal for `customerId`, which comes back to `returnUrl`. @throws BillingProviderError */
  portal(customerId: string, returnUrl: string): Promise<{ url: string }>;
  /** The price `id`, for the pricing page; null when the provider has none. @throws BillingProviderError */
  price(id: string): Promise<ProviderPrice | null>;
  /**
   * The event in `body`, once its signature (`header`, the provider's signature header) is checked against the
   * endpoint's secret, with a tolerance of five minutes on its timestamp. @throws EventRejected
   */
  verifyEvent(body: Buffer, header: string | undefined): ProviderEvent;
}

/** A checkout session: whether it is complete and paid, in subscription mode, and what it made. */
export interface ProviderCheckout {
  id: string;
  /** Completed and paid (or free of charge). */
  paid: boolean;
  subscriptionMode: boolean;
  subscriptionId: string | null;
  customerId: string | null;
}

/** A subscription as the provider holds it now. */
export interface ProviderSubscription {
  id: string;
  customerId: string;
  /** The provider's status (domain/subscription.ts names Stripe's). */
  status: string;
  /** The prices of its items. */
  priceIds: string[];
  currentPeriodEnd: string | null;
  /** When it is set to end (a cancellation at the period's end); null when not. */
  cancelAt: string | null;
  endedAt: string | null;
}

/** A price as the pricing page shows it: cents in `currency` (lower case ISO 4217) every `interval` (`month`, `year`). */
export interface ProviderPrice {
  id: string;
  unitAmount: number | null;
  currency: string;
  interval: string | null;
}

/** A verified event: its id (applied once), type, when the provider made it, and the object it names. */
export interface ProviderEvent {
  id: string;
  type: string;
  created: string;
  /** The checkout session of a `checkout.session.*` event. */
  checkoutSessionId: string | null;
  /** The subscription a `customer.subscription.*` event is about. */
  subscriptionId: string | null;
}

/** The provider could not be reached or failed: a documented upstream failure (502 PAYMENT_PROVIDER_ERROR). */
export class BillingProviderError extends Error {}

/** An event that is not the provider's: forged, stale, unsigned or malformed (400, nothing changed). */
export class EventRejected extends Error {
  constructor(
    readonly reason: 'unsigned' | 'signature' | 'malformed',
    message: string,
  ) {
    super(message);
  }
}
