/**
 * A subscription's statuses as the subscription provider reports them (Stripe Billing's `subscription.status`), and
 * what each means for the keys issued to it (docs/billing.md, "The lifecycle").
 */
export const SUBSCRIPTION_STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'canceled',
  'unpaid',
  'paused',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/**
 * The status a key of a subscription is given when none of the subscription's prices is one of the plans' prices
 * (`STRIPE_PRICE_*`): not the provider's word but the service's. Such a subscription grants nothing.
 */
export const UNKNOWN_PRICE = 'unknown_price';

/** What a key of a subscription in a status may do: `works`, `works` while a payment is retried (`grace`), or nothing. */
export type KeyAccess = 'works' | 'grace' | 'refused';

/**
 * The access a subscription's status gives its keys. `active` and `trialing` work; `past_due` keeps working while the
 * provider retries the payment; every other status, an unknown one and {@link UNKNOWN_PRICE} included, is refused
 * (a status the provider adds later grants nothing until this rule names it).
 */
export function keyAccess(status: string): KeyAccess {
  if (status === 'active' || status === 'trialing') return 'works';
  if (status === 'past_due') return 'grace';
  return 'refused';
}

/** Why a key of a subscription in `status` is refused, for a person (the detail of 403 SUBSCRIPTION_INACTIVE). */
export function refusalReason(status: string): string {
  switch (status) {
    case 'canceled':
      return 'its subscription was canceled';
    case 'unpaid':
      return 'its subscription is unpaid: the payment failed after every retry';
    case 'paused':
      return 'its subscription is paused';
    case 'incomplete':
      return "its subscription's first payment is not complete";
    case 'incomplete_expired':
      return "its subscription's first payment was never completed";
    case UNKNOWN_PRICE:
      return "its subscription's price is not one of this service's plans";
    default:
      return `its subscription is ${status}`;
  }
}
