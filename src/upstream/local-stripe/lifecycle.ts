import type { EventDelivery } from './delivery.js';
import { checkoutSessionObject } from './checkout-session-object.js';
import { customerObject } from './objects.js';
import type { EmulatedCheckoutSession, EmulatedPrice, EmulatedSubscription } from './records.js';
import { subscriptionItemsList, subscriptionObject } from './subscription-objects.js';
import { type EmulatorState, stripeId } from './state.js';

/** Stripe's test cards the emulator knows (Stripe's "Testing" page), by number, and what a payment with each does. */
const TEST_CARDS: Record<string, { declined: string | null }> = {
  '4242424242424242': { declined: null },
  // Attaching it to a customer succeeds; charging it fails.
  '4000000000000341': { declined: 'Your card was declined.' },
  '4000000000000002': { declined: 'Your card was declined.' },
};

/** Whether a card number passes the Luhn check. */
function luhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The end of a period that starts at `start` (Unix seconds): a calendar month or year later, as Stripe bills. */
function periodEnd(start: number, interval: 'month' | 'year'): number {
  const d = new Date(start * 1000);
  if (interval === 'month') d.setUTCMonth(d.getUTCMonth() + 1);
  else d.setUTCFullYear(d.getUTCFullYear() + 1);
  return Math.floor(d.getTime() / 1000);
}

/** What a person typed on the Checkout page. */
export interface CardForm {
  email?: string;
  name?: string;
  cardNumber?: string;
  expiry?: string;
  cvc?: string;
}

/**
 * What happens in the emulated Stripe account: a Checkout paid or declined, a plan changed or a subscription canceled
 * in the customer portal, a status a test sets (as a failed renewal or a dashboard action would); each change is
 * saved and sends the events Stripe sends for it.
 */
export class EmulatedAccount {
  constructor(
    readonly state: EmulatorState,
    readonly delivery: EventDelivery,
    private readonly now: () => number,
    /** The Checkout page's address of a session. */
    readonly checkoutPageUrl: (sessionId: string) => string,
  ) {}

  /** The price `id`. @throws Error when there is none (the server answers Stripe's 404 before). */
  price = (id: string): EmulatedPrice => {
    const price = this.state.prices.get(id);
    if (!price) throw new Error(`no such price ${id}`);
    return price;
  };

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Records an event of `type` about `object` and queues it for every endpoint. */
  emit(type: string, object: Record<string, unknown>, previousAttributes: Record<string, unknown> | null = null): void {
    const event = { id: stripeId('evt_', 24), type, created: this.seconds(), object, previousAttributes };
    this.state.events.push(event);
    this.delivery.enqueue(event.id);
  }

  /** A new open Checkout Session in subscription mode, for 24 hours. */
  createCheckoutSession(
    input: Omit<
      EmulatedCheckoutSession,
      'id' | 'created' | 'expiresAt' | 'status' | 'paymentStatus' | 'customer' | 'subscription' | 'customerDetails'
    >,
  ): EmulatedCheckoutSession {
    const created = this.seconds();
    const session: EmulatedCheckoutSession = {
      ...input,
      id: stripeId('cs_test_a1', 58),
      created,
      expiresAt: created + 86_400,
      status: 'open',
      paymentStatus: 'unpaid',
      customer: null,
      subscription: null,
      customerDetails: null,
    };
    this.state.sessions.set(session.id, session);
    this.state.save();
    return session;
  }

  /**
   * Pays an open session with the card typed: a customer and an active subscription of the session's prices are made
   * and the session completes (`customer.created`, `customer.subscription.created`, `checkout.session.completed`), and
   * the browser goes to the success URL, `{CHECKOUT_SESSION_ID}` filled in. A declined or invalid card changes nothing
   * and says why, as Checkout's page does.
   */
  pay(sessionId: string, form: CardForm): { redirect: string } | { error: string } {
    const session = this.state.sessions.get(sessionId);
    if (session?.status !== 'open') return { error: 'This checkout session is no longer open.' };
    if (session.expiresAt <= this.seconds()) {
      session.status = 'expired';
      this.state.save();
      return { error: 'This checkout session has expired.' };
    }
    const email = (form.email ?? session.customerEmail ?? '').trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) return { error: 'Your email address is invalid.' };
    const number = (form.cardNumber ?? '').replace(/[\s-]/g, '');
    if (!/^\d{12,19}$/.test(number) || !luhn(number)) return { error: 'Your card number is invalid.' };
    const expiry = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec((form.expiry ?? '').trim());
    if (!expiry || Number(expiry[1]) < 1 || Number(expiry[1]) > 12) return { error: "Your card's expiration date is incomplete." };
    const year = expiry[2].length === 2 ? 2000 + Number(expiry[2]) : Number(expiry[2]);
    if (Date.UTC(year, Number(expiry[1]), 1) <= this.now()) return { error: "Your card's expiration year is in the past." };
    if (!/^\d{3,4}$/.test((form.cvc ?? '').trim())) return { error: "Your card's security code is incomplete." };
    const card = TEST_CARDS[number];
    if (!card)
      return {
        error:
          'Your card was declined. Your request was in test mode, but used a non test card. For a list of valid test cards, visit: https://stripe.com/docs/testing.',
      };
    if (card.declined) return { error: card.declined };

    const created = this.seconds();
    const customer = { id: stripeId('cus_', 14), email, name: form.name?.trim() || null, created };
    this.state.customers.set(customer.id, customer);
    this.emit('customer.created', customerObject(customer));
    const interval = this.price(session.lineItems[0].price).interval;
    const subscription: EmulatedSubscription = {
      id: stripeId('sub_', 24),
      customer: customer.id,
      status: 'active',
      created,
      items: session.lineItems.map((li) => ({ id: stripeId('si_', 14), price: li.price, quantity: li.quantity, created })),
      currentPeriodStart: created,
      currentPeriodEnd: periodEnd(created, interval),
      cancelAtPeriodEnd: false,
      cancelAt: null,
      canceledAt: null,
      endedAt: null,
      cancellationReason: null,
    };
    this.state.subscriptions.set(subscription.id, subscription);
    this.emit('customer.subscription.created', subscriptionObject(subscription, this.price));
    Object.assign(session, {
      status: 'complete',
      paymentStatus: 'paid',
      customer: customer.id,
      subscription: subscription.id,
      customerDetails: { email, name: customer.name },
    });
    this.emit('checkout.session.completed', checkoutSessionObject(session, this.checkoutPageUrl(session.id), this.price));
    this.state.save();
    return { redirect: session.successUrl.replaceAll('{CHECKOUT_SESSION_ID}', session.id) };
  }

  /** The customer portal's plan change: the subscription's item moves to `priceId` at once (`customer.subscription.updated`). */
  changePrice(subscriptionId: string, priceId: string): void {
    const sub = this.subscription(subscriptionId);
    const price = this.price(priceId);
    const previous = { items: subscriptionItemsList(sub, this.price) };
    sub.items = [{ ...sub.items[0], price: price.id }];
    sub.currentPeriodEnd = Math.max(sub.currentPeriodEnd, periodEnd(sub.currentPeriodStart, price.interval));
    this.emit('customer.subscription.updated', subscriptionObject(sub, this.price), previous);
    this.state.save();
  }

  /**
   * The customer portal's cancellation: at once (`customer.subscription.deleted`, status `canceled`), or at the
   * period's end (`customer.subscription.updated` with `cancel_at_period_end`; the status stays until then).
   */
  cancel(subscriptionId: string, atPeriodEnd: boolean): void {
    const sub = this.subscription(subscriptionId);
    const now = this.seconds();
    if (atPeriodEnd) {
      const previous = { cancel_at_period_end: sub.cancelAtPeriodEnd, cancel_at: sub.cancelAt, canceled_at: sub.canceledAt };
      Object.assign(sub, {
        cancelAtPeriodEnd: true,
        cancelAt: sub.currentPeriodEnd,
        canceledAt: now,
        cancellationReason: 'cancellation_requested',
      });
      this.emit('customer.subscription.updated', subscriptionObject(sub, this.price), previous);
    } else {
      Object.assign(sub, { status: 'canceled', canceledAt: now, endedAt: now, cancellationReason: 'cancellation_requested' });
      this.emit('customer.subscription.deleted', subscriptionObject(sub, this.price));
    }
    this.state.save();
  }

  /**
   * Moves a subscription to `status`, with the events Stripe sends: `customer.subscription.updated` (and `.paused` or
   * `.resumed`), or `.deleted` for `canceled`. Tests use it for what takes days at Stripe: a renewal's payment failing
   * (`past_due`, then `unpaid`), a trial ending without a payment method (`paused`).
   */
  setStatus(subscriptionId: string, status: string): void {
    const sub = this.subscription(subscriptionId);
    const previous = { status: sub.status };
    const was = sub.status;
    sub.status = status;
    if (status === 'canceled') {
      Object.assign(sub, { canceledAt: this.seconds(), endedAt: this.seconds(), cancellationReason: 'payment_failed' });
      this.emit('customer.subscription.deleted', subscriptionObject(sub, this.price));
    } else {
      this.emit('customer.subscription.updated', subscriptionObject(sub, this.price), previous);
      if (status === 'paused') this.emit('customer.subscription.paused', subscriptionObject(sub, this.price));
      if (was === 'paused' && status === 'active') this.emit('customer.subscription.resumed', subscriptionObject(sub, this.price));
    }
    this.state.save();
  }

  /** The subscription `id`. @throws Error when there is none. */
  subscription(id: string): EmulatedSubscription {
    const sub = this.state.subscriptions.get(id);
    if (!sub) throw new Error(`no such subscription ${id}`);
    return sub;
  }
}
