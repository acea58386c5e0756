import {
  STRIPE_API_VERSION,
  type EmulatedCustomer,
  type EmulatedEvent,
  type EmulatedPortalSession,
  type EmulatedPrice,
  type EmulatedProduct,
} from './records.js';

/**
 * The API objects the local Stripe emulator answers with and sends in its events: each has the fields of Stripe's own
 * fixture of that object (`openapi/fixtures3.json` of the public `stripe/openapi` repository, API version
 * {@link STRIPE_API_VERSION}), no more; a field the emulator does not model is null, empty, or Stripe's default
 * (test/upstream/stripe-emulator.test.ts holds them to the fixtures). Instants are Unix seconds, amounts in cents.
 */

export function productObject(p: EmulatedProduct): Record<string, unknown> {
  return {
    active: true,
    created: p.created,
    default_price: p.defaultPrice,
    description: p.description,
    id: p.id,
    images: [],
    livemode: false,
    marketing_features: [],
    metadata: {},
    name: p.name,
    object: 'product',
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: null,
    unit_label: null,
    updated: p.created,
    url: null,
    type: 'service',
  };
}

export function priceObject(p: EmulatedPrice): Record<string, unknown> {
  return {
    active: true,
    billing_scheme: 'per_unit',
    created: p.created,
    currency: p.currency,
    custom_unit_amount: null,
    id: p.id,
    livemode: false,
    lookup_key: p.lookupKey,
    metadata: {},
    nickname: p.nickname,
    object: 'price',
    product: p.product,
    recurring: { interval: p.interval, interval_count: 1, meter: null, usage_type: 'licensed', trial_period_days: null },
    tax_behavior: 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: 'recurring',
    unit_amount: p.unitAmount,
    unit_amount_decimal: String(p.unitAmount),
  };
}

/** A price as the legacy `plan` object a subscription item still carries. */
export function planObject(p: EmulatedPrice): Record<string, unknown> {
  return {
    active: true,
    amount: p.unitAmount,
    amount_decimal: String(p.unitAmount),
    billing_scheme: 'per_unit',
    created: p.created,
    currency: p.currency,
    id: p.id,
    interval: p.interval,
    interval_count: 1,
    livemode: false,
    metadata: {},
    meter: null,
    nickname: p.nickname,
    object: 'plan',
    product: p.product,
    tiers_mode: null,
    transform_usage: null,
    trial_period_days: null,
    usage_type: 'licensed',
  };
}

export function customerObject(c: EmulatedCustomer): Record<string, unknown> {
  return {
    address: null,
    balance: 0,
    created: c.created,
    currency: 'usd',
    default_source: null,
    delinquent: false,
    description: null,
    discount: null,
    email: c.email,
    id: c.id,
    invoice_prefix: c.id.slice(4, 12).toUpperCase(),
    invoice_settings: {
      custom_fields: null,
      default_payment_method: null,
      footer: null,
      rendering_options: null,
    },
    livemode: false,
    metadata: {},
    name: c.name,
    next_invoice_sequence: 2,
    object: 'customer',
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

export function portalSessionObject(p: EmulatedPortalSession, pageUrl: string, configuration: string): Record<string, unknown> {
  return {
    configuration,
    created: p.created,
    customer: p.customer,
    flow: null,
    id: p.id,
    livemode: false,
    locale: null,
    object: 'billing_portal.session',
    on_behalf_of: null,
    return_url: p.returnUrl,
    url: pageUrl,
    customer_account: null,
  };
}

export function eventObject(e: EmulatedEvent): Record<string, unknown> {
  return {
    api_version: STRIPE_API_VERSION,
    created: e.created,
    // `previous_attributes` is part of `data` on `*.updated` events (Stripe's Event reference); the fixture is a
    // `plan.created` event, which has none.
    data: e.previousAttributes ? { object: e.object, previous_attributes: e.previousAttributes } : { object: e.object },
    id: e.id,
    livemode: false,
    object: 'event',
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: e.type,
  };
}
