import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { QuotaMeter } from '../../access/quota-meter.js';
import { monthOf, type PlanLimiters } from '../../access/plan-limiters.js';
import { principalOf } from '../plugins/auth.js';
import { NoQuery, problemResponses } from '../schemas/common.js';

/** GET /v1/usage: the caller's plan, its limits and what it has used; does not count against them. */
export function registerUsageRoutes(
  app: FastifyInstance,
  deps: { config: Config; limiters: PlanLimiters; quotas: QuotaMeter; clock: () => Date },
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
      const { plan, subject } = principalOf(request);
      const limits = deps.config.plans[plan];
      const now = deps.clock();
      const minute = await deps.limiters.used(plan, subject);
      const { month, secondsLeft } = monthOf(now);
      const monthUsed = Math.min(await deps.quotas.used(subject, month), limits.perMonth);
      return {
        data: {
          plan,
          limits,
          minute: { used: minute.used, remaining: Math.max(0, limits.perMinute - minute.used), resetSeconds: minute.resetSeconds },
          month: { month, used: monthUsed, remaining: limits.perMonth - monthUsed, resetSeconds: secondsLeft },
        },
        meta: { dataAge: now.toISOString(), source: 'cached' as const, freshnessThreshold: 0, refreshTriggered: false },
      };
    },
  );
}
