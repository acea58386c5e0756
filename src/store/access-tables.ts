import type { Generated } from 'kysely';

// The tables of keys, quotas and billing (see Database in store/schema.ts): instants are ISO 8601 UTC strings.

export interface ApiKeysTable {
  id: string;
  digest: string;
  prefix_hint: string;
  plan: string;
  label: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** A publishable key's web origins, comma-separated (`https://app.example,https://www.app.example`); null for a secret key. */
  origins: string | null;
  /** The OpenAPI operation ids the key may call, comma-separated (`searchRentals,getProperty`); null for every one its plan allows. */
  operations: string | null;
  /** Where the key came from: `cli` (`keys issue`), `import` (`keys import`) or `stripe` (a checkout). Migration 032. */
  source: Generated<string>;
  /** The subscription the key was issued to (`billing_subscriptions.id`); null for a key of the command line. */
  subscription_id: Generated<string | null>;
  /** That subscription's status as last applied (domain/subscription.ts), copied here so that a request reads one row. */
  subscription_status: Generated<string | null>;
  /** What the key's limits and quota count against when not its own digest (`subscription:<id>`, or a rotated key's predecessor's). */
  subject: Generated<string | null>;
  /** When a rotation replaced the key (UTC); its `expires_at` is then the end of the grace. */
  replaced_at: Generated<string | null>;
}

/** A subscription as last read from the provider (migration 032). Instants are UTC ISO 8601. */
export interface BillingSubscriptionsTable {
  id: string;
  /** `stripe`. */
  provider: string;
  customer_id: string;
  /** The provider's status (domain/subscription.ts), or `unknown_price`. */
  status: string;
  /** The plan its prices grant; null when none of them is a plan's. */
  plan: string | null;
  /** The prices of its items, comma-separated. */
  price_ids: string;
  current_period_end: string | null;
  /** When it is set to end (a cancellation at the period's end); null when not. */
  cancel_at: string | null;
  ended_at: string | null;
  /** When the read that gave this state started: a state read earlier never replaces it. */
  read_at: string;
  updated_at: string;
}

/** A provider event applied once (migration 032): `applied` or `ignored` (a type the service does not act on). */
export interface BillingEventsTable {
  id: string;
  type: string;
  outcome: string;
  /** When the provider created it. */
  created_at: string;
  applied_at: string;
}

/** A key issued at a checkout, sealed with the session's id until the success page shows it (migration 032). */
export interface KeyRevealsTable {
  /** SHA-256 of the checkout session id, hex. */
  session_digest: string;
  key_id: string;
  /** The key, AES-256-GCM under a key derived from the session id (billing/key-seal.ts); null once shown. */
  sealed: string | null;
  created_at: string;
  revealed_at: string | null;
}

/** Requests counted by subject and day (`YYYY-MM-DD`, UTC), beside `quota_usage`'s month (migration 032). */
export interface QuotaUsageDaysTable {
  subject: string;
  day: string;
  used: number;
}

export interface QuotaUsageTable {
  subject: string;
  month: string;
  used: number;
}
