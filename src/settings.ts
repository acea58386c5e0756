/**
 * One environment variable the service reads: its default (the value `loadConfig` falls back to; null: unset)
 * and what it means. `shownDefault` says the default in words where it follows a rule (it depends on another
 * variable), and the reader then works it out itself.
 */
export interface Setting {
  default: number | boolean | string | readonly number[] | null;
  shownDefault?: string;
  meaning: string;
}

const PLAN_LIMITS = {
  FREE: [10, 100],
  STARTER: [30, 5000],
  PRO: [60, 25000],
  BUSINESS: [120, 100000],
} as const;

/** The per-plan limit variables, each plan in turn (PLANS order). */
const planLimitSettings = Object.fromEntries(
  Object.entries(PLAN_LIMITS).flatMap(([plan, [perMinute, perMonth]]) => [
    [
      `RATE_LIMIT_${plan}_PER_MINUTE`,
      { default: perMinute, meaning: `requests a minute on the ${plan.toLowerCase()} plan (anonymous callers are free, per address)` },
    ],
    [`QUOTA_${plan}_PER_MONTH`, { default: perMonth, meaning: `requests a calendar month (UTC) on the ${plan.toLowerCase()} plan` }],
  ]),
) as Record<`RATE_LIMIT_${keyof typeof PLAN_LIMITS}_PER_MINUTE` | `QUOTA_${keyof typeof PLAN_LIMITS}_PER_MONTH`, Setting>;

/**
 * Every environment variable the service reads, in the order docs/configuration.md lists them: the one source of
 * that page's table (`npm run docs:config` writes it; a test fails when they differ). Durations in seconds.
 */
export const SETTINGS = {
  ENV_FILE: {
    default: '.env',
    meaning:
      'a file of `NAME=value` lines every command reads at start, when it is there (variables already set win); `.env.example` lists them all',
  },
  HOST: { default: '127.0.0.1', meaning: 'the address the API listens on' },
  PORT: { default: 8080, meaning: 'the port the API listens on' },
  DATABASE_URL: {
    default: null,
    shownDefault: '`./data/nyc-listings.db`',
    meaning: 'SQLite file, or `postgres://...` (one schema per instance: add `?options=-c%20search_path%3Dname`)',
  },
  UPSTREAM_URL: {
    default: null,
    shownDefault: '(unset: local upstream)',
    meaning: 'GraphQL endpoint of the real site; unset starts the local upstream on a free loopback port',
  },
  UPSTREAM_HEADERS: {
    default: null,
    shownDefault: "the site's public clients' headers",
    meaning: 'JSON object of headers to add or replace',
  },
  UPSTREAM_RESULT_CAP: { default: 1000, meaning: 'results one upstream search reaches; larger scopes are crawled in parts' },
  UPSTREAM_BLOCK_BACKOFF_SECONDS: { default: 1800, meaning: 'how long a 403 bot block is waited out' },
  HYDRATION_BATCH: { default: null, shownDefault: '20 against a real site, 100 locally', meaning: 'listings per detail request' },
  HYDRATION_BUDGET: {
    default: 2000,
    meaning: "listings hydrated at most right after a scope's refresh (the background hydration takes the rest of the backlog)",
  },
  JOB_RETRY_ATTEMPTS: {
    default: 5,
    meaning:
      "attempts (the first included) of a crawl's page or a hydration's batch, waited out 1 s to 30 s apart with jitter, on top of UPSTREAM_MAX_ATTEMPTS",
  },
  HYDRATION_MAX_FAILURES: {
    default: 5,
    meaning: 'failed detail requests after which a listing is parked (left out of the backlog until a crawl sees it change)',
  },
  HYDRATION_WAIT_SECONDS: { default: 3, meaning: 'how long a property lookup waits for its hydration' },
  UPSTREAM_TIMEOUT_SECONDS: { default: 15, meaning: 'per upstream request' },
  REQUEST_DEADLINE_SECONDS: {
    default: 10,
    meaning:
      'the longest a request waits for the upstream (a listing or building the mirror lacks): past it, 504 `UPSTREAM_TIMEOUT` with `Retry-After`, the lookup going on so that the next call finds it',
  },
  UPSTREAM_MAX_ATTEMPTS: { default: 3, meaning: 'attempts for a transient failure (timeout, network, 5xx), with jittered backoff' },
  UPSTREAM_BREAKER_THRESHOLD: { default: 5, meaning: 'consecutive failures that open the circuit breaker' },
  UPSTREAM_BREAKER_HALF_OPEN_SECONDS: { default: 30, meaning: 'when an open circuit breaker tries again' },
  UPSTREAM_CONCURRENCY: { default: null, shownDefault: '1 against a real site, 4 locally', meaning: 'upstream requests in flight' },
  UPSTREAM_PACING_SECONDS: {
    default: null,
    shownDefault: '1 against a real site, 0 locally',
    meaning: 'the least time between two upstream request starts (plus up to half again of jitter)',
  },
  UPSTREAM_MAX_QUEUED: {
    default: 50,
    meaning: 'upstream calls that may wait; a lookup a caller waits for beyond this is 503 `UPSTREAM_BUSY`',
  },
  LOCAL_UPSTREAM_RESULT_CAP: { default: 1000, meaning: 'local upstream: the result cap it plays (0: none)' },
  LOCAL_UPSTREAM_ADMIN_PORT: {
    default: 0,
    meaning: "local upstream: its admin server's port (faults, stats, market clock); 0 picks a free one",
  },
  LOCAL_UPSTREAM_FAULTS: {
    default: '',
    meaning:
      'local upstream: faults to inject, e.g. `errorRate=0.05,stallRate=0.02,stallMs=20000,on=details` (also latencyMs, blockRate, malformedRate, hangRate, graphqlErrorRate, resetRate, failAfter; docs/operations.md)',
  },
  MARKET_CLOCK: { default: true, meaning: 'local upstream: a seeded market that lists, reprices and delists hourly (docs/data.md)' },
  MARKET_SEED: { default: 2016, meaning: "local upstream: the market clock's seed" },
  SHARED_DATA_DIR: { default: '../shared/data', meaning: 'the real public data the local upstream serves' },
  FRESHNESS_SEARCH_SECONDS: { default: 3600, meaning: 'freshness threshold of searches' },
  FRESHNESS_PROPERTY_SECONDS: { default: 3600, meaning: 'freshness threshold of a listing' },
  FRESHNESS_BUILDING_SECONDS: { default: 86400, meaning: 'freshness threshold of a building' },
  FRESHNESS_AREAS_SECONDS: { default: 604800, meaning: 'freshness threshold of the area list' },
  SYNC_INTERVAL_SECONDS: {
    default: null,
    shownDefault: '90 % of `FRESHNESS_SEARCH_SECONDS`',
    meaning: 'scheduled refresh of every scope; 0 turns the scheduler off',
  },
  OPEN_DATA_URL: {
    default: null,
    shownDefault: '(unset: local SODA emulator)',
    meaning: 'NYC Open Data (SODA) site, `https://data.cityofnewyork.us`; unset starts the local emulator on a free loopback port',
  },
  OPEN_DATA_APP_TOKEN: {
    default: null,
    shownDefault: '(none)',
    meaning: 'sent as `X-App-Token` to SODA (requests then count against the application, not this address)',
  },
  OPEN_DATA_PAGE_SIZE: { default: 50000, meaning: 'rows a SODA request (`$limit`; 50,000 is the most a 2.0 endpoint answers)' },
  OPEN_DATA_FRESHNESS_SECONDS: {
    default: 2678400,
    meaning: 'freshness threshold of recorded sales and tax lots (the city publishes monthly)',
  },
  LOCAL_SODA_FAULTS: {
    default: '',
    meaning: 'local SODA emulator: faults to inject, as `LOCAL_UPSTREAM_FAULTS` (a block is a 429; docs/operations.md)',
  },
  OPEN_DATA_SYNC_INTERVAL_SECONDS: { default: 86400, meaning: 'scheduled incremental sync of NYC Open Data; 0 turns it off' },
  MORTGAGE_RATE_PERCENT: { default: 6.5, meaning: "a sale's monthly cost: the mortgage rate, percent a year" },
  MORTGAGE_DOWN_PAYMENT_PERCENT: { default: 20, meaning: "a sale's monthly cost: the down payment, percent of the price" },
  MORTGAGE_TERM_YEARS: { default: 30, meaning: "a sale's monthly cost: the mortgage's term, years" },
  API_KEY_PREFIX: { default: 'SERVICE', meaning: 'keys are `<prefix>_<uuid v4>`' },
  API_KEY_PEPPER: { default: null, shownDefault: '(none)', meaning: 'server-side secret mixed into stored key digests (HMAC-SHA-256)' },
  ...planLimitSettings,
  REDIS_URL: { default: null, shownDefault: '(none)', meaning: 'shared rate limits and refresh locks' },
  REDIS_KEY_PREFIX: { default: 'nyc-listings:', meaning: 'prefix of every Redis key the service writes' },
  TRUST_PROXY: { default: false, meaning: 'honour `X-Forwarded-For` for the client IP' },
  CORS_ORIGINS: { default: '*', meaning: 'origins browser apps may call from (comma-separated), or any' },
  MIN_PLAN_MARKET_HISTORY: { default: 'pro', meaning: 'the lowest plan that may read market history' },
  MIN_PLAN_COMPARABLES: { default: 'pro', meaning: 'the lowest plan that may read comparables' },
  MIN_PLAN_ESTIMATES: { default: 'pro', meaning: 'the lowest plan that may read estimates of what a property is worth' },
  MIN_PLAN_CHANGES_STREAM: { default: 'business', meaning: 'the lowest plan that may open the change stream' },
  MIN_PLAN_WEBHOOKS: { default: 'business', meaning: 'the lowest plan that may hold webhooks' },
  CHANGES_RETENTION_DAYS: { default: 90, meaning: 'days the change feed keeps its events' },
  CHANGES_STREAM_HEARTBEAT_SECONDS: { default: 15, meaning: 'between two heartbeats of the change stream' },
  CHANGES_STREAM_POLL_SECONDS: { default: 1, meaning: "how often the change log's head is polled" },
  CHANGES_STREAM_MAX_PER_KEY: { default: 5, meaning: 'open change streams a key may hold on one instance' },
  WEBHOOK_RETRY_SCHEDULE_SECONDS: {
    default: [0, 5, 300, 1800, 7200, 18000, 36000, 36000],
    meaning: 'webhook attempts: the first at once, then these waits; after the last, a dead letter',
  },
  WEBHOOK_TIMEOUT_SECONDS: { default: 15, meaning: "one webhook attempt's timeout" },
  WEBHOOK_POLL_SECONDS: { default: 1, meaning: 'how often due webhook work is looked for' },
  WEBHOOK_CONCURRENCY: { default: 32, meaning: 'webhook attempts in flight' },
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: {
    default: 8,
    meaning: "one subscription's webhook attempts in flight (a slow receiver holds back only its own)",
  },
  WEBHOOK_ALLOW_PRIVATE_TARGETS: { default: false, meaning: 'allow plain http and private, loopback or link-local webhook targets' },
  KEY_ROTATION_GRACE_SECONDS: {
    default: 86400,
    meaning: 'how long a key replaced by a rotation (`/account`, `keys rotate`) keeps working beside the new one',
  },
  PUBLIC_URL: {
    default: null,
    shownDefault: "(unset: each request's own scheme and host)",
    meaning:
      'the address people reach the service at, e.g. `https://api.example.com`: where Stripe sends a subscriber back after checkout and the customer portal',
  },
  STRIPE_SECRET_KEY: {
    default: null,
    shownDefault: '(unset: the local Stripe emulator)',
    meaning:
      "Stripe's secret API key (`sk_live_...`, `sk_test_...`, or a restricted key); unset starts the local Stripe emulator on loopback (docs/billing.md)",
  },
  STRIPE_WEBHOOK_SECRET: {
    default: null,
    shownDefault: "(the emulator's own)",
    meaning: "the signing secret of the webhook endpoint `/billing/stripe/webhook` (`whsec_...`), from Stripe's dashboard",
  },
  STRIPE_PRICE_STARTER: {
    default: null,
    shownDefault: "(the emulator's own)",
    meaning:
      'the Stripe price ids that sell the starter plan, comma-separated (a monthly and a yearly one, say); none: the plan is not sold',
  },
  STRIPE_PRICE_PRO: { default: null, shownDefault: "(the emulator's own)", meaning: 'the same for the pro plan' },
  STRIPE_PRICE_BUSINESS: { default: null, shownDefault: "(the emulator's own)", meaning: 'the same for the business plan' },
  STRIPE_API_URL: {
    default: 'https://api.stripe.com',
    meaning: "Stripe's API (another address for an emulator of your own; the local one sets its own when `STRIPE_SECRET_KEY` is unset)",
  },
  LOCAL_STRIPE_PORT: { default: 0, meaning: 'local Stripe emulator: its port (API, Checkout and the customer portal); 0 picks a free one' },
  LOCAL_STRIPE_STATE_FILE: {
    default: null,
    shownDefault: 'beside the SQLite database (`stripe-emulator.json`); in memory on PostgreSQL',
    meaning: "local Stripe emulator: the file that keeps its customers, subscriptions and secrets across restarts ('-': in memory)",
  },
  KEY_CACHE_SECONDS: { default: 30, meaning: 'how long a key looked up is reused: how long a revoke made elsewhere takes to be seen' },
  QUOTA_FLUSH_SECONDS: { default: 1, meaning: 'between two writes of the monthly counts (the most a crash leaves uncounted)' },
  SEARCH_INDEX: {
    default: true,
    meaning:
      'searches are answered from an index of every active listing in memory, the store reading only the rows of their page (docs/search-index.md, docs/performance.md)',
  },
  PRICE_POSITIONS: {
    default: true,
    meaning:
      "after each sync, value every active listing and store how far its asking price is from the estimate: what searches' `maxPricePosition` reads (docs/estimates.md)",
  },
  ESTIMATE_REFRESH_SECONDS: {
    default: 60,
    meaning:
      "the least age of a kind's comparables before a write to the mirror has them read again in the background, the ones in hand answering meanwhile (their `asOf`); 0: after every write (docs/estimates.md)",
  },
  READ_CACHE_SECONDS: { default: 2, meaning: 'how long a search answer or total may be reused (docs/decisions.md)' },
  ANSWER_CACHE_MB: {
    default: 16,
    meaning: 'megabytes of serialized answers the answer cache may hold; 0 turns it off (docs/performance.md)',
  },
  ROW_BUILDERS: {
    default: true,
    meaning:
      'SQLite: rows read as arrays and made objects by a literal generated per statement, not by better-sqlite3 (docs/performance.md)',
  },
  BACKGROUND_THREAD: { default: true, meaning: '`serve`: the syncs and other jobs in a thread of their own (docs/operations.md)' },
  SQLITE_CHECKPOINT_SECONDS: {
    default: 1,
    meaning:
      "SQLite: the write-ahead log's checkpoints run in a thread of their own this often, off the event loop; 0: the writer's connection checkpoints as it commits (docs/performance.md)",
  },
  NAMED_STATEMENTS: {
    default: true,
    meaning: 'PostgreSQL: a statement text seen twice runs as a named prepared statement, searches excepted (docs/performance.md)',
  },
  METRICS_PORT: {
    default: null,
    shownDefault: '(unset: off)',
    meaning:
      'serves Prometheus metrics at `GET /metrics` on this port of `HOST` (0: a free one, logged), never on the public port (docs/operations.md)',
  },
  SLOW_REQUEST_MS: { default: 1000, meaning: 'successful answers slower than this (milliseconds) are logged at info' },
  LOG_LEVEL: { default: 'info', meaning: 'pino level; `Authorization` is redacted from logs' },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    default: null,
    shownDefault: '(unset: off)',
    meaning:
      "OpenTelemetry traces sent to this OTLP/HTTP collector (`<endpoint>/v1/traces`, JSON): requests, the store's and Redis' calls, the upstream's, a search's stages, syncs and webhook attempts; the trace id in log lines and problem documents (docs/operations.md)",
  },
  OTEL_SERVICE_NAME: { default: 'nyc-listings', meaning: "the traces' service name" },
} satisfies Record<string, Setting>;

/** The name of an environment variable the service reads. */
export type SettingName = keyof typeof SETTINGS;

/**
 * The `.env.example` file: every setting, commented out at its default, under its meaning (`npm run docs:config`
 * writes it; a test fails when it differs).
 */
export function envExample(): string {
  const value = (s: Setting) => (s.default === null ? '' : Array.isArray(s.default) ? s.default.join(',') : String(s.default));
  const lines = Object.entries(SETTINGS).flatMap(([name, s]: [string, Setting]) => [
    `# ${s.meaning.replaceAll('`', '')}${s.shownDefault ? ` (default: ${s.shownDefault.replaceAll('`', '')})` : ''}`,
    `#${name}=${value(s)}`,
    '',
  ]);
  return [
    '# nyc-listings configuration. Copy this file to .env and uncomment what you change: every command (serve, sync,',
    '# keys, webhooks, seed) reads .env from its working directory (or the file ENV_FILE names); variables already set win.',
    '# Durations in seconds, sizes in megabytes. Written by `npm run docs:config` from src/settings.ts (docs/configuration.md).',
    '',
    ...lines,
  ].join('\n');
}

/** The Markdown table of every setting (docs/configuration.md holds it between its markers). */
export function settingsTable(): string {
  const shown = (s: Setting) =>
    s.shownDefault ??
    (s.default === null
      ? '(none)'
      : Array.isArray(s.default)
        ? `\`${s.default.join(',')}\``
        : typeof s.default === 'boolean'
          ? s.default
            ? 'on'
            : 'off'
          : s.default === ''
            ? '(none)'
            : String(s.default));
  const rows = Object.entries(SETTINGS).map(([name, s]: [string, Setting]) => `| \`${name}\` | ${shown(s)} | ${s.meaning} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
