import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { PLANS, type Config, type Plan } from '../../config.js';
import { monthOf, WINDOW_SECONDS, type PlanLimiters } from '../../access/plan-limiters.js';
import type { QuotaMeter } from '../../access/quota-meter.js';
import { Problem } from '../problem.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The day (`YYYY-MM-DD`, UTC) whose quota counted this request, once counted: a 304 gives it back to that day. */
    countedDay: string | null;
  }
  interface FastifyContextConfig {
    /** false: the route neither counts against nor is refused by rate limits and quotas. */
    limited?: boolean;
  }
}

/** A plan's headers that are the same on every answer: its policy and its limit (written once, not per request). */
interface PolicyHeaders {
  policy: string;
  limit: string;
}

/** The per-minute headers, by names in lower case: Fastify keeps them so, and lowers any other on every call. */
function setHeaders(reply: FastifyReply, plan: PolicyHeaders, remaining: number, resetSeconds: number): void {
  reply.header('ratelimit-policy', plan.policy);
  reply.header('ratelimit', `"per-minute";r=${remaining};t=${resetSeconds}`);
  reply.header('x-ratelimit-limit', plan.limit);
  reply.header('x-ratelimit-remaining', String(remaining));
  reply.header('x-ratelimit-reset', String(resetSeconds));
}

/**
 * Applies the plan's per-minute limit and monthly quota to every /v1 request that has a principal and
 * whose route is not marked `limited: false`. Every such answer carries RateLimit-Policy, RateLimit and
 * X-RateLimit-* headers. Over the minute limit: 429 RATE_LIMIT_EXCEEDED; over the month's quota:
 * 429 QUOTA_EXCEEDED; both with Retry-After and `retryAfter` in seconds. A 304 answer is given back to both.
 */
export function registerRateLimits(
  app: FastifyInstance,
  deps: { config: Config; limiters: PlanLimiters; quotas: QuotaMeter; clock: () => Date; logger: Logger },
): void {
  app.decorateRequest('countedDay', null);
  const policies = Object.fromEntries(
    PLANS.map((plan) => {
      const limit = deps.config.plans[plan].perMinute;
      return [plan, { policy: `"per-minute";q=${limit};w=${WINDOW_SECONDS}`, limit: String(limit) }];
    }),
  ) as Record<Plan, PolicyHeaders>;
  // A 304 (the client's copy is current) costs nothing: it is given back to both limits, as peers do.
  // Only a 304 has something to wait for here (see app.ts on callback hooks).
  app.addHook('onResponse', (request, reply, done) => {
    const day = request.countedDay;
    if (reply.statusCode !== 304 || !day || !request.principal) return done();
    const { plan, subject } = request.principal;
    deps.limiters.refund(plan, subject).then(
      () => {
        deps.quotas.uncount(subject, day);
        done();
      },
      (error: Error) => done(error),
    );
  });
  // A callback hook (see app.ts): a request whose month is counted in memory waits only for the limiter.
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (!request.principal || request.routeOptions.config?.limited === false) return done();
    const { plan, subject } = request.principal;
    const limits = deps.config.plans[plan];
    /** Notes the day once this request is counted in it (`used`: its month's count with it), then holds the count to the quota. */
    const counted = (day: string, used: number, secondsLeft: number) => {
      request.countedDay = day;
      if (used <= limits.perMonth) return done();
      done(
        new Problem('QUOTA_EXCEEDED', `The ${plan} plan allows ${limits.perMonth} requests a month (UTC); this month's are used.`, {
          retryAfter: secondsLeft,
          headers: { 'Retry-After': String(secondsLeft) },
        }),
      );
    };
    deps.limiters.consume(plan, subject).then(
      (state) => {
        setHeaders(reply, policies[plan], state.remainingPoints, Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
        const { day, secondsLeft } = monthOf(deps.clock());
        const used = deps.quotas.countKnown(subject, day);
        if (used !== undefined) return counted(day, used, secondsLeft);
        deps.quotas.count(subject, day).then((read) => counted(day, read, secondsLeft), done);
      },
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) {
          deps.logger.warn({ err: (rejection as Error).message }, 'rate limiter unavailable; request allowed');
          return done();
        }
        const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        setHeaders(reply, policies[plan], 0, retryAfter);
        done(
          new Problem('RATE_LIMIT_EXCEEDED', `The ${plan} plan allows ${limits.perMinute} requests a minute.`, {
            retryAfter,
            headers: { 'Retry-After': String(retryAfter) },
          }),
        );
      },
    );
  });
}
