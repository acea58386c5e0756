import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { PLANS, type Config, type Plan } from '../../config.js';
import type { QuotaRepository } from '../../store/quota-repository.js';
import { Problem } from '../problem.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route neither counts against nor is refused by rate limits and quotas. */
    limited?: boolean;
  }
}

const WINDOW_SECONDS = 60;

/** The month (`YYYY-MM`, UTC) of `now`, and seconds until the next one begins. */
export function monthOf(now: Date): { month: string; secondsLeft: number } {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return { month: now.toISOString().slice(0, 7), secondsLeft: Math.max(1, Math.ceil((next - now.getTime()) / 1000)) };
}

/**
 * Per-minute limiters, one per plan: in Redis when a client is given (shared by every instance), with an
 * in-process limiter as insurance that takes over at once while Redis is not ready; in-process otherwise.
 */
export class PlanLimiters {
  private readonly limiters: Record<Plan, RateLimiterAbstract>;

  constructor(config: Config, redis: Redis | null, keyPrefix: string) {
    const build = (plan: Plan): RateLimiterAbstract => {
      const points = config.plans[plan].perMinute;
      const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: `${keyPrefix}rl:${plan}` });
      if (!redis) return memory;
      return new RateLimiterRedis({
        storeClient: redis,
        points,
        duration: WINDOW_SECONDS,
        keyPrefix: `${keyPrefix}rl:${plan}`,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      });
    };
    this.limiters = Object.fromEntries(PLANS.map((p) => [p, build(p)])) as Record<Plan, RateLimiterAbstract>;
  }

  /** Counts one request; resolves with the state after it, or rejects with the state when over the limit. */
  consume(plan: Plan, subject: string): Promise<RateLimiterRes> {
    return this.limiters[plan].consume(subject, 1);
  }

  /** Gives back one request counted in the current minute (an answer that cost nothing: 304). */
  async refund(plan: Plan, subject: string): Promise<void> {
    await this.limiters[plan].reward(subject, 1).catch(() => undefined);
  }

  /** Requests counted in the current minute (0 when none). */
  async used(plan: Plan, subject: string): Promise<{ used: number; resetSeconds: number }> {
    const res = await this.limiters[plan].get(subject).catch(() => null);
    return { used: res?.consumedPoints ?? 0, resetSeconds: res ? Math.ceil(res.msBeforeNext / 1000) : WINDOW_SECONDS };
  }
}

function setHeaders(reply: FastifyReply, limit: number, remaining: number, resetSeconds: number): void {
  reply.header('RateLimit-Policy', `"per-minute";q=${limit};w=${WINDOW_SECONDS}`);
  reply.header('RateLimit', `"per-minute";r=${remaining};t=${resetSeconds}`);
  reply.header('X-RateLimit-Limit', String(limit));
  reply.header('X-RateLimit-Remaining', String(remaining));
  reply.header('X-RateLimit-Reset', String(resetSeconds));
}

/**
 * Applies the plan's per-minute limit and monthly quota to every /v1 request that has a principal and
 * whose route is not marked `limited: false`. Every such answer carries RateLimit-Policy, RateLimit and
 * X-RateLimit-* headers. Over the minute limit: 429 RATE_LIMIT_EXCEEDED; over the month's quota:
 * 429 QUOTA_EXCEEDED; both with Retry-After and `retryAfter` in seconds. A 304 answer is given back to both.
 */
export function registerRateLimits(
  app: FastifyInstance,
  deps: { config: Config; limiters: PlanLimiters; quotas: QuotaRepository; clock: () => Date; logger: Logger },
): void {
  const countedMonth = new WeakMap<FastifyRequest, string>();
  // A 304 (the client's copy is current) costs nothing: it is given back to both limits, as peers do.
  app.addHook('onResponse', async (request, reply) => {
    const month = countedMonth.get(request);
    if (reply.statusCode !== 304 || !month || !request.principal) return;
    await deps.limiters.refund(request.principal.plan, request.principal.subject);
    await deps.quotas.decrement(request.principal.subject, month).catch(() => undefined);
  });
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.principal || request.routeOptions.config?.limited === false) return;
    const { plan, subject } = request.principal;
    const limits = deps.config.plans[plan];
    let state: RateLimiterRes;
    try {
      state = await deps.limiters.consume(plan, subject);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) {
        deps.logger.warn({ err: (rejection as Error).message }, 'rate limiter unavailable; request allowed');
        return;
      }
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      setHeaders(reply, limits.perMinute, 0, retryAfter);
      throw new Problem('RATE_LIMIT_EXCEEDED', `The ${plan} plan allows ${limits.perMinute} requests a minute.`, {
        retryAfter,
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
    setHeaders(reply, limits.perMinute, state.remainingPoints, Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
    const { month, secondsLeft } = monthOf(deps.clock());
    const used = await deps.quotas.increment(subject, month);
    countedMonth.set(request, month);
    if (used > limits.perMonth) {
      throw new Problem('QUOTA_EXCEEDED', `The ${plan} plan allows ${limits.perMonth} requests a month (UTC); this month's are used.`, {
        retryAfter: secondsLeft,
        headers: { 'Retry-After': String(secondsLeft) },
      });
    }
  });
}
