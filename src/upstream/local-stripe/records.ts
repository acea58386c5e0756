/**
 * What the local Stripe emulator keeps of each object: the facts it models, from which the API objects are built
 * (objects.ts, subscription-objects.ts, checkout-session-object.ts). Instants are Unix seconds, amounts in cents.
 */

/** The API version whose shapes the emulator answers (the one the service pins). */
export const STRIPE_API_VERSION = '2026-07-29.dahlia';

export interface EmulatedProduct {
  id: string;
  name: string;
  description: string;
  defaultPrice: string;
  created: number;
}

export interface EmulatedPrice {
  id: string;
  product: string;
  /** Cents. */
  unitAmount: number;
  currency: string;
  interval: 'month' | 'year';
  nickname: string;
  lookupKey: string;
  created: number;
}

export interface EmulatedCustomer {
  id: string;
  email: string;
  name: string | null;
  created: number;
}

export interface EmulatedSubscription {
  id: string;
  customer: string;
  status: string;
  created: number;
  items: { id: string; price: string; quantity: number; created: number }[];
  currentPeriodStart: number;
  currentPeriodEnd: number;
  cancelAtPeriodEnd: boolean;
  cancelAt: number | null;
  canceledAt: number | null;
  endedAt: number | null;
  cancellationReason: string | null;
}

export interface EmulatedCheckoutSession {
  id: string;
  created: number;
  expiresAt: number;
  lineItems: { price: string; quantity: number }[];
  successUrl: string;
  cancelUrl: string | null;
  clientReferenceId: string | null;
  customerEmail: string | null;
  metadata: Record<string, string>;
  status: 'open' | 'complete' | 'expired';
  paymentStatus: 'unpaid' | 'paid';
  customer: string | null;
  subscription: string | null;
  customerDetails: { email: string; name: string | null } | null;
}

export interface EmulatedPortalSession {
  id: string;
  created: number;
  customer: string;
  returnUrl: string | null;
  /** The secret in the portal page's address. */
  secret: string;
}

export interface EmulatedEvent {
  id: string;
  type: string;
  created: number;
  object: Record<string, unknown>;
  previousAttributes: Record<string, unknown> | null;
}
