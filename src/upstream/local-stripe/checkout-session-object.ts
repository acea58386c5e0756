import type { EmulatedCheckoutSession, EmulatedPrice } from './records.js';

const NULL_ADDRESS = { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };

/** The fields of a Checkout Session in subscription mode that this emulator never varies (its fixture's values), new each call. */
const fixedFields = () => ({
  after_expiration: null,
  allow_promotion_codes: null,
  automatic_tax: { enabled: false, liability: null, status: null, provider: null },
  billing_address_collection: null,
  client_secret: null,
  consent: null,
  consent_collection: null,
  custom_fields: [],
  custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
  customer_creation: null,
  invoice: null,
  invoice_creation: null,
  livemode: false,
  locale: null,
  mode: 'subscription',
  object: 'checkout.session',
  payment_intent: null,
  payment_link: null,
  payment_method_collection: 'always',
  payment_method_configuration_details: null,
  payment_method_options: {},
  payment_method_types: ['card'],
  phone_number_collection: { enabled: false },
  recovered_from: null,
  saved_payment_method_options: null,
  setup_intent: null,
  shipping_address_collection: null,
  shipping_cost: null,
  shipping_options: [],
  submit_type: null,
  total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
  ui_mode: 'hosted',
  adaptive_pricing: { enabled: false },
  discounts: [],
  collected_information: null,
  permissions: null,
  wallet_options: null,
  origin_context: null,
  customer_account: null,
  integration_identifier: null,
  managed_payments: null,
  currency_conversion: null,
});

/** A Checkout Session in subscription mode as Stripe answers it (fields as objects.ts says). */
export function checkoutSessionObject(
  s: EmulatedCheckoutSession,
  pageUrl: string,
  priceOf: (id: string) => EmulatedPrice,
): Record<string, unknown> {
  const subtotal = s.lineItems.reduce((sum, li) => sum + priceOf(li.price).unitAmount * li.quantity, 0);
  const currency = s.lineItems.length ? priceOf(s.lineItems[0].price).currency : 'usd';
  return {
    ...fixedFields(),
    amount_subtotal: subtotal,
    amount_total: subtotal,
    cancel_url: s.cancelUrl,
    client_reference_id: s.clientReferenceId,
    created: s.created,
    currency,
    customer: s.customer,
    customer_details: s.customerDetails
      ? {
          address: NULL_ADDRESS,
          email: s.customerDetails.email,
          name: s.customerDetails.name,
          phone: null,
          tax_exempt: 'none',
          tax_ids: [],
          business_name: null,
          individual_name: null,
        }
      : null,
    customer_email: s.customerEmail,
    expires_at: s.expiresAt,
    id: s.id,
    metadata: s.metadata,
    payment_status: s.paymentStatus,
    status: s.status,
    subscription: s.subscription,
    success_url: s.successUrl,
    // Stripe answers the page's address while the session is open, and null once it is complete or expired.
    url: s.status === 'open' ? pageUrl : null,
  };
}
