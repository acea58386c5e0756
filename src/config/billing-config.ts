import { dirname, join, resolve } from 'node:path';
import { ConfigError, ids, int, text } from './env-values.js';
import type { PaidPlan } from './plans.js';

/** Stripe Billing's settings (null where unset) and the local emulator's; seconds for durations. */
export interface BillingConfig {
  stripe: {
    /** Null: the local Stripe emulator is started and its own key, webhook secret and prices are used. */
    secretKey: string | null;
    webhookSecret: string | null;
    apiUrl: string;
    /** The price ids of each paid plan (an empty list: the plan is not sold). */
    prices: Record<PaidPlan, string[]>;
  };
  /** Where people reach the service (no trailing slash); null: each request's own scheme and host. */
  publicUrl: string | null;
  keyRotationGraceSeconds: number;
  localStripePort: number;
  /** The emulator's state file; null keeps it in memory. */
  localStripeStateFile: string | null;
}

/**
 * Stripe's settings. The emulator's state file defaults to `stripe-emulator.json` beside a SQLite database.
 * @throws ConfigError when a price id sells two plans, or `PUBLIC_URL` is not an http(s) address.
 */
export function billingConfig(env: NodeJS.ProcessEnv, databaseUrl: string): BillingConfig {
  const prices = {
    starter: ids(env, 'STRIPE_PRICE_STARTER'),
    pro: ids(env, 'STRIPE_PRICE_PRO'),
    business: ids(env, 'STRIPE_PRICE_BUSINESS'),
  };
  const all = Object.values(prices).flat();
  const twice = all.find((id, i) => all.indexOf(id) !== i);
  if (twice) throw new ConfigError(`the Stripe price ${twice} is given to two plans (STRIPE_PRICE_*): a price sells one plan`);
  let publicUrl: string | null = null;
  if (env.PUBLIC_URL) {
    try {
      const url = new URL(env.PUBLIC_URL);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
      publicUrl = url.href.replace(/\/+$/, '');
    } catch {
      throw new ConfigError(`PUBLIC_URL must be an http or https address, got "${env.PUBLIC_URL}"`);
    }
  }
  const stateFile = env.LOCAL_STRIPE_STATE_FILE;
  const sqliteFile = /^postgres(ql)?:\/\//.test(databaseUrl) ? null : databaseUrl.replace(/^sqlite:/, '');
  return {
    stripe: {
      secretKey: env.STRIPE_SECRET_KEY || null,
      webhookSecret: env.STRIPE_WEBHOOK_SECRET || null,
      apiUrl: text(env, 'STRIPE_API_URL'),
      prices,
    },
    publicUrl,
    keyRotationGraceSeconds: int(env, 'KEY_ROTATION_GRACE_SECONDS'),
    localStripePort: int(env, 'LOCAL_STRIPE_PORT'),
    localStripeStateFile:
      stateFile === '-'
        ? null
        : stateFile
          ? resolve(stateFile)
          : sqliteFile && sqliteFile !== ':memory:'
            ? join(dirname(resolve(sqliteFile)), 'stripe-emulator.json')
            : null,
  };
}
