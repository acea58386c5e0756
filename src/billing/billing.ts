import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { PAID_PLANS, PLANS, type Config, type PaidPlan, type Plan } from '../config.js';
import { keyDigest, keyHint, newApiKey } from '../domain/api-key.js';
import { UNKNOWN_PRICE } from '../domain/subscription.js';
import type { Metrics } from '../metrics/metrics.js';
import type { BillingRepository, SubscriptionRow } from '../store/billing-repository.js';
import type { ApiKeyRow, KeysRepository } from '../store/keys-repository.js';
import { sealKey, sessionDigest, unsealKey } from './key-seal.js';
import { EventRejected, type ProviderEvent, type ProviderSubscription, type SubscriptionProvider } from './provider.js';

/** What became of an event: applied, already applied (`duplicate`), or acknowledged and left (`ignored`). */
export type EventOutcome = 'applied' | 'duplicate' | 'ignored';

/** What the success page of a checkout session shows. */
export type CheckoutResult =
  | { state: 'shown'; key: string; plan: Plan }
  | { state: 'already-shown'; plan: Plan | null; revealedAt: string | null }
  | { state: 'not-found' | 'not-paid' | 'not-subscription' | 'no-plan' };

/** A plan that cannot be bought: free, unknown, or without a price (`STRIPE_PRICE_*`), or a price not of that plan. */
export class PlanNotSold extends Error {}

/**
 * Plans sold through a subscription provider (docs/billing.md). The provider is the source of truth: on each event the
 * subscription is read as it is now, so an event that arrives twice, late or out of order never applies an older
 * state; each event id is applied once, in one transaction with what it changes. A checkout's key is issued once,
 * by whichever comes first of its event and its success page.
 */
export class Billing {
  private readonly planOfPrice = new Map<string, PaidPlan>();

  constructor(
    private readonly deps: {
      provider: SubscriptionProvider;
      repository: BillingRepository;
      keys: KeysRepository;
      config: Config;
      clock: () => Date;
      logger: Logger;
      metrics?: Metrics;
    },
  ) {
    for (const plan of PAID_PLANS) for (const price of deps.config.billing.stripe.prices[plan]) this.planOfPrice.set(price, plan);
  }

  get provider(): SubscriptionProvider {
    return this.deps.provider;
  }

  /** The price ids that sell `plan` (`STRIPE_PRICE_*`), monthly first where the operator listed it so; empty: not sold. */
  pricesOf(plan: Plan): string[] {
    return plan === 'free' ? [] : this.deps.config.billing.stripe.prices[plan];
  }

  /**
   * The plan a subscription's prices grant: the highest plan among its items' prices. A price no plan lists grants
   * nothing and is logged as a warning; null when none grants a plan.
   */
  planOf(subscription: Pick<ProviderSubscription, 'id' | 'priceIds'>): PaidPlan | null {
    let best: PaidPlan | null = null;
    for (const price of subscription.priceIds) {
      const plan = this.planOfPrice.get(price);
      if (!plan)
        this.deps.logger.warn(
          { subscription: subscription.id, price },
          'subscription price sells no plan (STRIPE_PRICE_*): it grants nothing',
        );
      else if (!best || PLANS.indexOf(plan) > PLANS.indexOf(best)) best = plan;
    }
    return best;
  }

  /**
   * A hosted checkout for `plan` at `price` (one of the plan's; its first by default), coming back to `baseUrl`'s
   * success page or pricing page. @throws PlanNotSold, BillingProviderError
   */
  async startCheckout(plan: string, price: string | undefined, baseUrl: string): Promise<string> {
    const prices = PLANS.includes(plan as Plan) ? this.pricesOf(plan as Plan) : [];
    if (!prices.length) throw new PlanNotSold(`the ${plan} plan is not sold here`);
    if (price !== undefined && !prices.includes(price)) throw new PlanNotSold(`the price ${price} does not sell the ${plan} plan`);
    const { url } = await this.deps.provider.startCheckout({
      priceId: price ?? prices[0],
      successUrl: `${baseUrl}/billing/success?session_id={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${baseUrl}/pricing`,
    });
    return url;
  }

  /**
   * Verifies and applies one event from the provider's webhook: a completed checkout issues its key; an event about a
   * subscription applies the subscription as the provider holds it now; any other type is acknowledged and ignored.
   * Counted in the metrics by type and outcome; a rejected event is logged as a warning.
   * @throws EventRejected (forged, stale, unsigned, malformed: nothing changed), BillingProviderError or a database error
   * (nothing changed: the provider sends it again)
   */
  async handleEvent(body: Buffer, signature: string | undefined): Promise<EventOutcome> {
    let event: ProviderEvent;
    try {
      event = this.deps.provider.verifyEvent(body, signature);
    } catch (error) {
      if (error instanceof EventRejected) {
        this.deps.logger.warn({ reason: error.reason, err: error.message }, 'billing event rejected');
        this.count('unverified', 'rejected');
      }
      throw error;
    }
    try {
      const outcome = await this.apply(event);
      this.count(event.type, outcome);
      return outcome;
    } catch (error) {
      this.deps.logger.warn(
        { event: event.id, type: event.type, err: (error as Error).message },
        'billing event not applied: the provider will send it again',
      );
      this.count(event.type, 'failed');
      throw error;
    }
  }

  private count(type: string, outcome: string): void {
    this.deps.metrics?.billingEvents.inc({ type, outcome });
  }

  private async apply(event: ProviderEvent): Promise<EventOutcome> {
    if (await this.deps.repository.eventSeen(event.id)) return 'duplicate';
    const record = <O extends 'applied' | 'ignored'>(outcome: O) => ({ id: event.id, type: event.type, outcome, createdAt: event.created });
    if (
      event.checkoutSessionId &&
      (event.type === 'checkout.session.completed' || event.type === 'checkout.session.async_payment_succeeded')
    ) {
      const outcome = await this.issueForCheckout(event.checkoutSessionId, record('applied'));
      if (outcome === 'duplicate') return 'duplicate';
      if (outcome === 'issued' || outcome === 'exists' || outcome === 'no-plan') return 'applied';
      // Not paid yet (an asynchronous payment), or not a subscription's: its later event, or the success page, issues it.
      return this.ignore(record('ignored'));
    }
    if (event.subscriptionId) {
      const readAt = this.deps.clock().toISOString();
      const subscription = await this.deps.provider.subscription(event.subscriptionId);
      if (!subscription) {
        this.deps.logger.warn(
          { event: event.id, subscription: event.subscriptionId },
          'billing event names a subscription the provider does not have',
        );
        return this.ignore(record('ignored'));
      }
      const applied = await this.deps.repository.apply(
        { event: record('applied'), subscription: this.stateOf(subscription, readAt) },
        readAt,
      );
      if (applied.subscriptionApplied) this.deps.keys.changed();
      return applied.duplicate ? 'duplicate' : 'applied';
    }
    return this.ignore(record('ignored'));
  }

  private async ignore(event: { id: string; type: string; outcome: 'ignored'; createdAt: string }): Promise<EventOutcome> {
    const { duplicate } = await this.deps.repository.apply({ event }, this.deps.clock().toISOString());
    return duplicate ? 'duplicate' : 'ignored';
  }

  /** The stored row of a subscription read at `readAt`, and what its keys get: its plan and its status (or unknown_price). */
  private stateOf(subscription: ProviderSubscription, readAt: string): { row: SubscriptionRow; keyStatus: string; plan: Plan | null } {
    const plan = this.planOf(subscription);
    return {
      row: {
        id: subscription.id,
        provider: this.deps.provider.name,
        customer_id: subscription.customerId,
        status: subscription.status,
        plan,
        price_ids: subscription.priceIds.join(','),
        current_period_end: subscription.currentPeriodEnd,
        cancel_at: subscription.cancelAt,
        ended_at: subscription.endedAt,
        read_at: readAt,
        updated_at: readAt,
      },
      keyStatus: plan ? subscription.status : UNKNOWN_PRICE,
      plan,
    };
  }

  /**
   * Reads the checkout session and its subscription from the provider and, when it is paid, applies the subscription
   * and issues its key unless it has one (with `event`, recorded in the same transaction).
   * @throws BillingProviderError or a database error
   */
  private async issueForCheckout(
    sessionId: string,
    event?: { id: string; type: string; outcome: 'applied'; createdAt: string },
  ): Promise<'issued' | 'exists' | 'duplicate' | 'not-found' | 'not-paid' | 'not-subscription' | 'no-plan'> {
    const checkout = await this.deps.provider.checkout(sessionId);
    if (!checkout) return 'not-found';
    if (!checkout.subscriptionMode) return 'not-subscription';
    if (!checkout.paid || !checkout.subscriptionId) return 'not-paid';
    const readAt = this.deps.clock().toISOString();
    const subscription = await this.deps.provider.subscription(checkout.subscriptionId);
    if (!subscription) return 'not-found';
    const state = this.stateOf(subscription, readAt);
    const key = newApiKey(this.deps.config.apiKeyPrefix);
    const issue = {
      sessionDigest: sessionDigest(sessionId),
      sealed: sealKey(key, sessionId),
      id: randomUUID(),
      digest: keyDigest(key, this.deps.config.apiKeyPepper),
      hint: keyHint(key, this.deps.config.apiKeyPrefix),
      label: `${this.deps.provider.name} ${subscription.id}`,
    };
    const applied = await this.deps.repository.apply({ event, subscription: state, issue: state.plan ? issue : undefined }, readAt);
    if (applied.subscriptionApplied || applied.keyIssued) this.deps.keys.changed();
    if (applied.duplicate) return 'duplicate';
    if (!state.plan) return 'no-plan';
    return applied.keyIssued ? 'issued' : 'exists';
  }

  /**
   * What the success page of checkout session `sessionId` shows: its key the first time (issuing it first when its event
   * has not arrived), that it was shown on any later visit, or why there is none. @throws BillingProviderError
   */
  async checkoutResult(sessionId: string): Promise<CheckoutResult> {
    const digest = sessionDigest(sessionId);
    const shown = async (): Promise<CheckoutResult | null> => {
      const taken = await this.deps.repository.takeSealedKey(digest, this.deps.clock().toISOString());
      if (taken) {
        const row = await this.deps.keys.findById(taken.keyId);
        return { state: 'shown', key: unsealKey(taken.sealed, sessionId), plan: (row?.plan ?? 'free') as Plan };
      }
      const issued = await this.deps.repository.issuedKey(digest);
      if (!issued) return null;
      const row = await this.deps.keys.findById(issued.keyId);
      return { state: 'already-shown', plan: (row?.plan as Plan | undefined) ?? null, revealedAt: issued.revealedAt };
    };
    const known = await shown();
    if (known) return known;
    const outcome = await this.issueForCheckout(sessionId);
    if (outcome === 'not-found' || outcome === 'not-paid' || outcome === 'not-subscription' || outcome === 'no-plan')
      return { state: outcome };
    return (await shown()) ?? { state: 'not-found' };
  }

  /** The subscription a key was issued to, as last applied; undefined for a key of the command line. */
  async subscriptionOf(key: Pick<ApiKeyRow, 'subscription_id'>): Promise<SubscriptionRow | undefined> {
    return key.subscription_id ? this.deps.repository.subscription(key.subscription_id) : undefined;
  }

  /** The provider's customer portal for the customer of `key`'s subscription; null for a key without one. @throws BillingProviderError */
  async portalFor(key: Pick<ApiKeyRow, 'subscription_id'>, returnUrl: string): Promise<string | null> {
    const subscription = await this.subscriptionOf(key);
    if (!subscription) return null;
    return (await this.deps.provider.portal(subscription.customer_id, returnUrl)).url;
  }
}
