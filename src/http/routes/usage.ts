import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { QuotaMeter } from '../../access/quota-meter.js';
import { monthOf, type PlanLimiters } from '../../access/plan-limiters.js';
import { principalOf } from '../plugins/auth.js';
import { NoQuery, problemResponses } from '../schemas/common.js';
import { Nullable } from '../../wire/common.js';
import { keyAccess } from '../../domain/subscription.js';

/** A key's subscription as GET /v1/usage shows it. Instants are UTC. */
export interface UsageSubscription {
  status: string;
  currentPeriodEnd: string | null;
  cancelAt: string | null;
}

const SubscriptionSchema = Nullable(
  Type.Object(
    {
      status: Type.String({
        description:
          "Stripe's status of the key's subscription: `active`, `trialing`, `past_due` (the last payment failed and Stripe retries it; the key keeps working meanwhile), or another, whose key is refused (403 SUBSCRIPTION_INACTIVE).",
      }),
      currentPeriodEnd: Nullable(Type.String({ format: 'date-time', description: 'When the period paid for ends (UTC).' })),
      cancelAt: Nullable(Type.String({ format: 'date-time', description: 'When the subscription is set to end (UTC); null when not.' })),
      notice: Nullable(Type.String({ description: 'What the holder should know, for a person (a payment being retried, an end set).' })),
    },
    { description: 'The subscription the key was bought with; null for a key the operator issued.' },
  ),
);

/** GET /v1/usage: the caller's plan, its limits and what it has used; does not count against them. */
export function registerUsageRoutes(
  app: FastifyInstance,
  deps: {
    config: Config;
    limiters: PlanLimiters;
    quotas: QuotaMeter;
    clock: () => Date;
    /** The subscription of the key `id`; null for a key without one. */
    subscriptionOf: (keyId: string) => Promise<UsageSubscription | null>;
  },
): void {
  app.get(
    '/v1/usage',
    {
      config: { limited: false },
      schema: {
        operationId: 'getUsage',
        summary: 'Plan, limits and usage of the calling key',
        description: 'Needs a key. This request is not counted. Months are calendar months in UTC.',
        tags: ['meta'],
        response: {
          200: Type.Object({
            data: Type.Object({
              plan: Type.String(),
              limits: Type.Object({ maxPerPage: Type.Integer(), perMinute: Type.Integer(), perMonth: Type.Integer() }),
              minute: Type.Object({ used: Type.Integer(), remaining: Type.Integer(), resetSeconds: Type.Integer() }),
              month: Type.Object({ month: Type.String(), used: Type.Integer(), remaining: Type.Integer(), resetSeconds: Type.Integer() }),
              subscription: SubscriptionSchema,
            }),
            meta: Type.Ref('SingleMeta'),
          }),
          ...problemResponses(400, 401),
        },
        security: [{ bearerAuth: [] }],
        querystring: NoQuery,
      },
    },
    async (request) => {
      const { plan, subject, keyId } = principalOf(request);
      const limits = deps.config.plans[plan];
      const now = deps.clock();
      const minute = await deps.limiters.used(plan, subject);
      const { month, secondsLeft } = monthOf(now);
      const monthUsed = Math.min(await deps.quotas.used(subject, month), limits.perMonth);
      const subscription = keyId ? await deps.subscriptionOf(keyId) : null;
      return {
        data: {
          plan,
          limits,
          minute: { used: minute.used, remaining: Math.max(0, limits.perMinute - minute.used), resetSeconds: minute.resetSeconds },
          month: { month, used: monthUsed, remaining: limits.perMonth - monthUsed, resetSeconds: secondsLeft },
          subscription: subscription && { ...subscription, notice: noticeOf(subscription) },
        },
        meta: { dataAge: now.toISOString(), source: 'cached' as const, freshnessThreshold: 0, refreshTriggered: false },
      };
    },
  );
}

/** What a key's holder should know of its subscription, for a person; null when all is well. */
function noticeOf(subscription: UsageSubscription): string | null {
  if (keyAccess(subscription.status) === 'grace')
    return 'The last payment failed. Stripe is retrying it, and this key keeps working meanwhile: update the payment method at /account (Manage billing).';
  if (subscription.cancelAt) return `The subscription ends at ${subscription.cancelAt}; the key stops working then.`;
  return null;
}
