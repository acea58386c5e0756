import { bool, int, num, planName, seconds, text } from './env-values.js';
import type { Plan, PlanLimits } from './plans.js';

/** The settings of access: keys, plans and their limits, the plan each feature needs, the change feed and webhooks. */
export function accessSettings(env: NodeJS.ProcessEnv) {
  const plan = (name: Plan, maxPerPage: number): PlanLimits => {
    const upper = name.toUpperCase() as 'FREE' | 'STARTER' | 'PRO' | 'BUSINESS';
    return { maxPerPage, perMinute: int(env, `RATE_LIMIT_${upper}_PER_MINUTE`, 1), perMonth: int(env, `QUOTA_${upper}_PER_MONTH`, 1) };
  };
  return {
    apiKeyPrefix: text(env, 'API_KEY_PREFIX'),
    apiKeyPepper: env.API_KEY_PEPPER || null,
    keyCacheSeconds: num(env, 'KEY_CACHE_SECONDS'),
    quotaFlushSeconds: num(env, 'QUOTA_FLUSH_SECONDS'),
    plans: {
      free: plan('free', 10),
      starter: plan('starter', 50),
      pro: plan('pro', 500),
      business: plan('business', 500),
    },
    changesRetentionDays: int(env, 'CHANGES_RETENTION_DAYS', 1),
    featurePlans: {
      marketHistory: planName(env, 'MIN_PLAN_MARKET_HISTORY'),
      comparables: planName(env, 'MIN_PLAN_COMPARABLES'),
      estimates: planName(env, 'MIN_PLAN_ESTIMATES'),
      changesStream: planName(env, 'MIN_PLAN_CHANGES_STREAM'),
      webhooks: planName(env, 'MIN_PLAN_WEBHOOKS'),
    },
    changesStream: {
      heartbeatSeconds: num(env, 'CHANGES_STREAM_HEARTBEAT_SECONDS'),
      pollSeconds: num(env, 'CHANGES_STREAM_POLL_SECONDS'),
      maxPerKey: int(env, 'CHANGES_STREAM_MAX_PER_KEY', 1),
    },
    webhooks: {
      schedule: seconds(env, 'WEBHOOK_RETRY_SCHEDULE_SECONDS'),
      timeoutSeconds: num(env, 'WEBHOOK_TIMEOUT_SECONDS'),
      pollSeconds: num(env, 'WEBHOOK_POLL_SECONDS'),
      concurrency: int(env, 'WEBHOOK_CONCURRENCY', 1),
      concurrencyPerSubscription: int(env, 'WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION', 1),
      allowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'),
    },
  };
}
