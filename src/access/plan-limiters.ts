import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';
import { PLANS, type Config, type Plan } from '../config.js';

/** Seconds of the per-minute window. */
export const WINDOW_SECONDS = 60;

/** The day last asked of {@link monthOf}: every request asks it, and a day's name and its month's end are the same all day. */
let lastDay = { start: 0, end: 0, day: '', month: '', monthEnd: 0 };

/** The month (`YYYY-MM`, UTC) and day (`YYYY-MM-DD`, UTC) of `now`, and seconds until the next month begins (at least 1). */
export function monthOf(now: Date): { month: string; day: string; secondsLeft: number } {
  const time = now.getTime();
  if (!(time >= lastDay.start && time < lastDay.end)) {
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    lastDay = {
      start,
      end: start + 86_400_000,
      day: now.toISOString().slice(0, 10),
      month: now.toISOString().slice(0, 7),
      monthEnd: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
    };
  }
  return { month: lastDay.month, day: lastDay.day, secondsLeft: Math.max(1, Math.ceil((lastDay.monthEnd - time) / 1000)) };
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
