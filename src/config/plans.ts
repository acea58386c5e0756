/** Subscription plans, lowest first. */
export const PLANS = ['free', 'starter', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

/** Limits of one plan: page size cap, requests per minute, requests per calendar month (UTC). */
export interface PlanLimits {
  maxPerPage: number;
  perMinute: number;
  perMonth: number;
}

/** The plans a subscription can buy: every plan but free. */
export const PAID_PLANS = ['starter', 'pro', 'business'] as const satisfies readonly Plan[];
export type PaidPlan = (typeof PAID_PLANS)[number];
