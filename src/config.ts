import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { SETTINGS } from './settings.js';
import { bool, ConfigError, headers, int, num, text } from './config/env-values.js';
import type { BillingConfig } from './config/billing-config.js';
import { billingConfig } from './config/billing-config.js';
import { accessSettings } from './config/access-settings.js';
import type { Plan, PlanLimits } from './config/plans.js';

export { ConfigError } from './config/env-values.js';
export type { BillingConfig } from './config/billing-config.js';
export { PAID_PLANS, PLANS, type PaidPlan, type Plan, type PlanLimits } from './config/plans.js';
import { SITE_HEADERS } from './upstream/site-headers.js';

/**
 * The service's whole configuration, read from the environment once by {@link loadConfig}.
 * Durations are in seconds, money in US dollars, rates in percent a year.
 */
export interface Config {
  host: string;
  port: number;
  /** `./data/nyc-listings.db`, `sqlite:/path/file.db`, `:memory:` or `postgres://...`. */
  databaseUrl: string;
  /** GraphQL endpoint of the upstream site; null starts the local upstream in-process on loopback. */
  upstreamUrl: string | null;
  /** Headers sent to the upstream (the site's public clients' set, with `UPSTREAM_HEADERS` JSON merged in). */
  upstreamHeaders: Record<string, string>;
  /** Seconds to wait out a 403 bot block before asking again. */
  upstreamBlockBackoffSeconds: number;
  /** Results one upstream search reaches (the site's cap): larger scopes are crawled in parts. */
  upstreamResultCap: number;
  /** Local upstream only: the port of its admin server (faults, stats, market clock); 0 picks a free one. */
  localUpstreamAdminPort: number;
  /** Local upstream only: the result cap it plays (0: none). */
  localUpstreamResultCap: number;
  /** Listings hydrated per detail request, at most per refresh cycle, and how long a property lookup waits for it (seconds). */
  hydration: { batch: number; budget: number; waitSeconds: number; maxFailures: number };
  /** Attempts of a background job's upstream request (a crawl's page, a hydration's batch), the first included. */
  jobRetryAttempts: number;
  upstreamTimeoutSeconds: number;
  /** The longest a request waits for the upstream (seconds): past it, 504 UPSTREAM_TIMEOUT, the lookup going on. */
  requestDeadlineSeconds: number;
  /** Upstream requests in flight at once. */
  upstreamConcurrency: number;
  /** Upstream calls that may wait for their turn; a lookup a caller waits for beyond this is a 503. */
  upstreamMaxQueued: number;
  /** Attempts for a transient upstream failure, the first included. */
  upstreamMaxAttempts: number;
  /** Consecutive upstream failures that open the circuit breaker, and seconds until it tries again. */
  upstreamBreakerThreshold: number;
  upstreamBreakerHalfOpenSeconds: number;
  /** Pause between two upstream requests of one crawl, seconds (the real site wants 0.5 to 2). */
  upstreamPacingSeconds: number;
  /** Local upstream: move the market (new listings, price changes, delistings) with the clock. */
  marketClock: boolean;
  marketSeed: number;
  /** Local upstream: faults to inject, e.g. `latencyMs=200,errorRate=0.1` (see upstream/local/server.ts). */
  localUpstreamFaults: string;
  /** Local SODA emulator: faults to inject, in the same form. */
  localSodaFaults: string;
  /** The port `GET /metrics` (Prometheus) is served on, apart from the API (0: a free one); null: off. */
  metricsPort: number | null;
  /** Folder holding the real public data (`../shared/data` beside the checkout). */
  sharedDataDir: string;
  freshness: { searchSeconds: number; propertySeconds: number; buildingSeconds: number; areasSeconds: number };
  /** Seconds between scheduled refreshes of each scope; 0 turns the scheduler off. */
  syncIntervalSeconds: number;
  /** NYC Open Data (SODA), the second upstream: its URL (null starts the local emulator), app token, page size, freshness and sync interval (seconds). */
  openData: { url: string | null; appToken: string | null; pageSize: number; freshnessSeconds: number; syncIntervalSeconds: number };
  /** Mortgage assumptions for a sale's monthly cost. */
  mortgage: { ratePercent: number; downPaymentPercent: number; termYears: number };
  apiKeyPrefix: string;
  /** Optional server-side secret mixed into stored key digests (HMAC-SHA-256). */
  apiKeyPepper: string | null;
  /** Seconds a key looked up stays cached: how long a revoke made elsewhere takes to be seen. */
  keyCacheSeconds: number;
  /** Seconds between two writes of the monthly quota counts (the most a crash can leave uncounted). */
  quotaFlushSeconds: number;
  /**
   * READ_CACHE_SECONDS: how long what is read from the store (the scopes' sync states, the search index's data
   * version, the area list, an answer in the answer cache) is reused, so how long a write by another instance may
   * take to show (this instance's own writes show at once).
   */
  readCacheSeconds: number;
  /** Bytes of serialized answers the answer cache may hold (ANSWER_CACHE_MB; 0 turns it off). */
  answerCacheBytes: number;
  /** Seconds a kind's comparables are kept before a write has them read again (ESTIMATE_REFRESH_SECONDS; 0: at every write). */
  estimateRefreshSeconds: number;
  /** SQLite: rows read as arrays and made objects by a literal generated per statement (ROW_BUILDERS, default on). */
  rowBuilders: boolean;
  /** SQLite: seconds between the write-ahead log's checkpoints in their thread; 0: the writer's connection checkpoints as it commits. */
  walCheckpointSeconds: number;
  /** `serve`: the background work in a thread of its own, the API thread only answering (BACKGROUND_THREAD, default on). */
  backgroundThread: boolean;
  /** PostgreSQL: a statement text seen twice runs as a named prepared statement (NAMED_STATEMENTS, default on). */
  namedStatements: boolean;
  /** Searches answered from the in-memory search index while it holds the store's data version (SEARCH_INDEX, default on). */
  searchIndex: boolean;
  /** Each active listing's price position valued and stored after each sync (PRICE_POSITIONS, default on). */
  pricePositions: boolean;
  /** Requests slower than this (milliseconds) are logged at info; other successful ones at debug. */
  slowRequestMs: number;
  plans: Record<Plan, PlanLimits>;
  /** Days the change feed keeps its events. */
  changesRetentionDays: number;
  /** The lowest plan that may read market history, comparables, estimates, the change stream, and hold webhooks. */
  featurePlans: { marketHistory: Plan; comparables: Plan; estimates: Plan; changesStream: Plan; webhooks: Plan };
  /** The change stream (SSE): seconds between heartbeats and between polls of the log; open streams a key may hold. */
  changesStream: { heartbeatSeconds: number; pollSeconds: number; maxPerKey: number };
  /**
   * Webhook delivery: the retry schedule (seconds after the previous attempt, the first at index 0), the
   * timeout of one attempt, seconds between polls for due work, attempts in flight, and whether targets
   * on private, loopback or link-local addresses (and plain http) are allowed.
   */
  /** Webhook delivery: the retry schedule and timeout (seconds), how often to look for work, attempts in flight in all and per subscription. */
  webhooks: {
    schedule: number[];
    timeoutSeconds: number;
    pollSeconds: number;
    concurrency: number;
    concurrencyPerSubscription: number;
    allowPrivateTargets: boolean;
  };
  /** Plans sold through a subscription provider (docs/billing.md). */
  billing: BillingConfig;
  redisUrl: string | null;
  /** Prefix of every Redis key the service writes. */
  redisKeyPrefix: string;
  trustProxy: boolean;
  /** Origins a browser app may call from: `*` (any, the default) or a list; credentials are never allowed. */
  corsOrigins: '*' | string[];
  logLevel: string;
  /** OpenTelemetry traces: the OTLP/HTTP collector (null: off) and the service's name in them. */
  tracing: { endpoint: string | null; serviceName: string };
}

/**
 * Reads a file of variables (`NAME=value` lines, Node's own `.env` parser) into `env` before the configuration is
 * read: `ENV_FILE`, else `.env` in the working directory when there is one. Variables already set win. Every command
 * calls it, so `serve`, `sync`, `keys`, `webhooks` and `seed` act on the same database. Returns the file read, or null.
 * @throws ConfigError when `ENV_FILE` names a file that is not there.
 */
export function loadEnvFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env.ENV_FILE;
  const file = resolve(named || (SETTINGS.ENV_FILE.default as string));
  if (!existsSync(file)) {
    if (named) throw new ConfigError(`ENV_FILE names ${file}, which is not there`);
    return null;
  }
  for (const [name, value] of Object.entries(parseEnv(readFileSync(file, 'utf8')))) if (env[name] === undefined) env[name] = value;
  return file;
}

/**
 * Reads the configuration from `env` (the only place that reads `process.env`).
 * @throws ConfigError on a malformed value.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const searchSeconds = int(env, 'FRESHNESS_SEARCH_SECONDS', 1);
  return {
    ...upstreamSettings(env),
    ...accessSettings(env),
    host: text(env, 'HOST'),
    port: int(env, 'PORT'),
    databaseUrl: env.DATABASE_URL || resolve('data/nyc-listings.db'),
    rowBuilders: bool(env, 'ROW_BUILDERS'),
    walCheckpointSeconds: num(env, 'SQLITE_CHECKPOINT_SECONDS'),
    backgroundThread: bool(env, 'BACKGROUND_THREAD'),
    namedStatements: bool(env, 'NAMED_STATEMENTS'),
    searchIndex: bool(env, 'SEARCH_INDEX'),
    pricePositions: bool(env, 'PRICE_POSITIONS'),
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT') : null,
    sharedDataDir: resolve(text(env, 'SHARED_DATA_DIR')),
    freshness: {
      searchSeconds,
      propertySeconds: int(env, 'FRESHNESS_PROPERTY_SECONDS', 1),
      buildingSeconds: int(env, 'FRESHNESS_BUILDING_SECONDS', 1),
      areasSeconds: int(env, 'FRESHNESS_AREAS_SECONDS', 1),
    },
    syncIntervalSeconds: int(env, 'SYNC_INTERVAL_SECONDS', 0, Math.floor(searchSeconds * 0.9)),
    openData: {
      url: env.OPEN_DATA_URL || null,
      appToken: env.OPEN_DATA_APP_TOKEN || null,
      pageSize: int(env, 'OPEN_DATA_PAGE_SIZE', 1),
      freshnessSeconds: int(env, 'OPEN_DATA_FRESHNESS_SECONDS', 1),
      syncIntervalSeconds: int(env, 'OPEN_DATA_SYNC_INTERVAL_SECONDS', 0),
    },
    mortgage: {
      ratePercent: num(env, 'MORTGAGE_RATE_PERCENT'),
      downPaymentPercent: num(env, 'MORTGAGE_DOWN_PAYMENT_PERCENT'),
      termYears: int(env, 'MORTGAGE_TERM_YEARS', 1),
    },
    slowRequestMs: int(env, 'SLOW_REQUEST_MS'),
    readCacheSeconds: num(env, 'READ_CACHE_SECONDS'),
    answerCacheBytes: Math.round(num(env, 'ANSWER_CACHE_MB') * 1024 * 1024),
    estimateRefreshSeconds: num(env, 'ESTIMATE_REFRESH_SECONDS'),
    billing: billingConfig(env, env.DATABASE_URL || resolve('data/nyc-listings.db')),
    redisUrl: env.REDIS_URL || null,
    redisKeyPrefix: text(env, 'REDIS_KEY_PREFIX'),
    trustProxy: bool(env, 'TRUST_PROXY'),
    corsOrigins:
      !env.CORS_ORIGINS || env.CORS_ORIGINS.trim() === '*'
        ? '*'
        : env.CORS_ORIGINS.split(',')
            .map((o) => o.trim())
            .filter(Boolean),
    logLevel: text(env, 'LOG_LEVEL'),
    tracing: { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || null, serviceName: text(env, 'OTEL_SERVICE_NAME') },
  };
}

/** The upstreams' settings: addresses, timeouts, pacing, retries, the breaker, hydration, and the local emulators'. */
function upstreamSettings(
  env: NodeJS.ProcessEnv,
): Pick<
  Config,
  | 'upstreamUrl'
  | 'upstreamHeaders'
  | 'upstreamBlockBackoffSeconds'
  | 'upstreamResultCap'
  | 'localUpstreamResultCap'
  | 'localUpstreamAdminPort'
  | 'hydration'
  | 'upstreamTimeoutSeconds'
  | 'requestDeadlineSeconds'
  | 'jobRetryAttempts'
  | 'upstreamConcurrency'
  | 'upstreamMaxAttempts'
  | 'upstreamMaxQueued'
  | 'upstreamBreakerThreshold'
  | 'upstreamBreakerHalfOpenSeconds'
  | 'marketClock'
  | 'marketSeed'
  | 'localUpstreamFaults'
  | 'localSodaFaults'
  | 'upstreamPacingSeconds'
> {
  const upstreamUrl = env.UPSTREAM_URL ? env.UPSTREAM_URL : null;
  return {
    upstreamUrl,
    upstreamHeaders: { ...SITE_HEADERS, ...headers(env) },
    upstreamBlockBackoffSeconds: num(env, 'UPSTREAM_BLOCK_BACKOFF_SECONDS'),
    upstreamResultCap: int(env, 'UPSTREAM_RESULT_CAP', 1),
    localUpstreamResultCap: int(env, 'LOCAL_UPSTREAM_RESULT_CAP'),
    localUpstreamAdminPort: int(env, 'LOCAL_UPSTREAM_ADMIN_PORT'),
    hydration: {
      batch: int(env, 'HYDRATION_BATCH', 1, upstreamUrl === null ? 100 : 20),
      budget: int(env, 'HYDRATION_BUDGET', 1),
      waitSeconds: num(env, 'HYDRATION_WAIT_SECONDS'),
      maxFailures: int(env, 'HYDRATION_MAX_FAILURES', 1),
    },
    upstreamTimeoutSeconds: num(env, 'UPSTREAM_TIMEOUT_SECONDS'),
    requestDeadlineSeconds: num(env, 'REQUEST_DEADLINE_SECONDS'),
    jobRetryAttempts: int(env, 'JOB_RETRY_ATTEMPTS', 1),
    // Real-site pacing follows its public clients: one request in flight, at least a second apart (plus jitter).
    upstreamConcurrency: int(env, 'UPSTREAM_CONCURRENCY', 1, upstreamUrl === null ? 4 : 1),
    upstreamMaxAttempts: int(env, 'UPSTREAM_MAX_ATTEMPTS', 1),
    upstreamMaxQueued: int(env, 'UPSTREAM_MAX_QUEUED', 1),
    upstreamBreakerThreshold: int(env, 'UPSTREAM_BREAKER_THRESHOLD', 1),
    upstreamBreakerHalfOpenSeconds: num(env, 'UPSTREAM_BREAKER_HALF_OPEN_SECONDS'),
    marketClock: bool(env, 'MARKET_CLOCK'),
    marketSeed: int(env, 'MARKET_SEED'),
    localUpstreamFaults: text(env, 'LOCAL_UPSTREAM_FAULTS'),
    localSodaFaults: text(env, 'LOCAL_SODA_FAULTS'),
    upstreamPacingSeconds: num(env, 'UPSTREAM_PACING_SECONDS', upstreamUrl === null ? 0 : 1),
  };
}
