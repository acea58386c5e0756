import { planObject, priceObject } from './objects.js';
import type { EmulatedPrice, EmulatedSubscription } from './records.js';

/** A subscription and its items as Stripe answers them (fields as objects.ts says). */
export function subscriptionItemObject(
  item: EmulatedSubscription['items'][number],
  sub: EmulatedSubscription,
  price: EmulatedPrice,
): Record<string, unknown> {
  return {
    created: item.created,
    discounts: [],
    id: item.id,
    metadata: {},
    object: 'subscription_item',
    price: priceObject(price),
    quantity: item.quantity,
    subscription: sub.id,
    tax_rates: [],
    plan: planObject(price),
    current_period_end: sub.currentPeriodEnd,
    current_period_start: sub.currentPeriodStart,
    billing_thresholds: null,
  };
}

/** The subscription's `items` list, as the subscription object and an update's `previous_attributes` show it. */
export function subscriptionItemsList(sub: EmulatedSubscription, priceOf: (id: string) => EmulatedPrice): Record<string, unknown> {
  return {
    data: sub.items.map((item) => subscriptionItemObject(item, sub, priceOf(item.price))),
    has_more: false,
    object: 'list',
    url: `/v1/subscription_items?subscription=${sub.id}`,
  };
}

export function subscriptionObject(sub: EmulatedSubscription, priceOf: (id: string) => EmulatedPrice): Record<string, unknown> {
  const currency = sub.items.length ? priceOf(sub.items[0].price).currency : 'usd';
  return {
    application: null,
    application_fee_percent: null,
    automatic_tax: { enabled: false, liability: null, disabled_reason: null },
    billing_cycle_anchor: sub.created,
    billing_cycle_anchor_config: null,
    cancel_at: sub.cancelAt,
    canceled_at: sub.canceledAt,
    cancellation_details: { comment: null, feedback: null, reason: sub.cancellationReason },
    collection_method: 'charge_automatically',
    created: sub.created,
    currency,
    customer: sub.customer,
    days_until_due: null,
    default_payment_method: null,
    default_source: null,
    default_tax_rates: [],
    description: null,
    discounts: [],
    ended_at: sub.endedAt,
    id: sub.id,
    invoice_settings: { account_tax_ids: null, issuer: { type: 'self' }, custom_fields: null, description: null, footer: null },
    items: subscriptionItemsList(sub, priceOf),
    latest_invoice: null,
    livemode: false,
    metadata: {},
    next_pending_invoice_item_invoice: null,
    object: 'subscription',
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: { payment_method_options: null, payment_method_types: null, save_default_payment_method: 'off' },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: sub.created,
    status: sub.status,
    test_clock: null,
    transfer_data: null,
    trial_end: null,
    trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
    trial_start: null,
    cancel_at_period_end: sub.cancelAtPeriodEnd,
    billing_thresholds: null,
    billing_mode: { type: 'classic', flexible: null },
    customer_account: null,
    managed_payments: null,
    billing_schedules: [],
  };
}
