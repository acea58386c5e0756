import { resolve } from 'node:path';

/** Subscription plans, lowest first. */
export const PLANS = ['free', 'starter', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

/** Limits of one plan: page size cap, requests per minute, requests per calendar month (UTC). */
export interface PlanLimits {
  maxPerPage: number;
  perMinute: number;
  perMonth: number;
}

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
  /** Ask the upstream for the local upstream's extension fields (listing date, amenities, year built). */
  upstreamExtendedFields: boolean;
  upstreamTimeoutSeconds: number;
  /** Upstream requests in flight at once. */
  upstreamConcurrency: number;
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
  /** Folder holding the real public data (`../shared/data` beside the checkout). */
  sharedDataDir: string;
  freshness: { searchSeconds: number; propertySeconds: number; buildingSeconds: number; areasSeconds: number };
  /** Seconds between scheduled refreshes of each scope; 0 turns the scheduler off. */
  syncIntervalSeconds: number;
  /** Mortgage assumptions for a sale's monthly cost. */
  mortgage: { ratePercent: number; downPaymentPercent: number; termYears: number };
  apiKeyPrefix: string;
  /** Optional server-side secret mixed into stored key digests (HMAC-SHA-256). */
  apiKeyPepper: string | null;
  plans: Record<Plan, PlanLimits>;
  redisUrl: string | null;
  /** Prefix of every Redis key the service writes. */
  redisKeyPrefix: string;
  trustProxy: boolean;
  logLevel: string;
}

/** Thrown by {@link loadConfig} when an environment variable has a value it cannot use. */
export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

function num(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new ConfigError(`${name} must be a number >= 0, got "${raw}"`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/**
 * Reads the configuration from `env` (the only place that reads `process.env`).
 * @throws ConfigError on a malformed value.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const searchSeconds = int(env, 'FRESHNESS_SEARCH_SECONDS', 3600, 1);
  const upstreamUrl = env.UPSTREAM_URL ? env.UPSTREAM_URL : null;
  const plan = (name: Plan, maxPerPage: number, perMinute: number, perMonth: number): PlanLimits => ({
    maxPerPage,
    perMinute: int(env, `RATE_LIMIT_${name.toUpperCase()}_PER_MINUTE`, perMinute, 1),
    perMonth: int(env, `QUOTA_${name.toUpperCase()}_PER_MONTH`, perMonth, 1),
  });
  return {
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 8080),
    databaseUrl: env.DATABASE_URL || resolve('data/nyc-listings.db'),
    upstreamUrl,
    upstreamExtendedFields: bool(env, 'UPSTREAM_EXTENDED_FIELDS', upstreamUrl === null),
    upstreamTimeoutSeconds: num(env, 'UPSTREAM_TIMEOUT_SECONDS', 15),
    upstreamConcurrency: int(env, 'UPSTREAM_CONCURRENCY', upstreamUrl === null ? 4 : 1, 1),
    upstreamMaxAttempts: int(env, 'UPSTREAM_MAX_ATTEMPTS', 3, 1),
    upstreamBreakerThreshold: int(env, 'UPSTREAM_BREAKER_THRESHOLD', 5, 1),
    upstreamBreakerHalfOpenSeconds: num(env, 'UPSTREAM_BREAKER_HALF_OPEN_SECONDS', 30),
    marketClock: bool(env, 'MARKET_CLOCK', true),
    marketSeed: int(env, 'MARKET_SEED', 2016),
    localUpstreamFaults: env.LOCAL_UPSTREAM_FAULTS ?? '',
    upstreamPacingSeconds: num(env, 'UPSTREAM_PACING_SECONDS', upstreamUrl === null ? 0 : 0.5),
    sharedDataDir: resolve(env.SHARED_DATA_DIR || '../shared/data'),
    freshness: {
      searchSeconds,
      propertySeconds: int(env, 'FRESHNESS_PROPERTY_SECONDS', 3600, 1),
      buildingSeconds: int(env, 'FRESHNESS_BUILDING_SECONDS', 86400, 1),
      areasSeconds: int(env, 'FRESHNESS_AREAS_SECONDS', 604800, 1),
    },
    syncIntervalSeconds: int(env, 'SYNC_INTERVAL_SECONDS', Math.floor(searchSeconds * 0.9)),
    mortgage: {
      ratePercent: num(env, 'MORTGAGE_RATE_PERCENT', 6.5),
      downPaymentPercent: num(env, 'MORTGAGE_DOWN_PAYMENT_PERCENT', 20),
      termYears: int(env, 'MORTGAGE_TERM_YEARS', 30, 1),
    },
    apiKeyPrefix: env.API_KEY_PREFIX || 'SERVICE',
    apiKeyPepper: env.API_KEY_PEPPER || null,
    plans: {
      free: plan('free', 10, 10, 100),
      starter: plan('starter', 50, 30, 5000),
      pro: plan('pro', 500, 60, 25000),
      business: plan('business', 500, 120, 100000),
    },
    redisUrl: env.REDIS_URL || null,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'nyc-listings:',
    trustProxy: bool(env, 'TRUST_PROXY', false),
    logLevel: env.LOG_LEVEL || 'info',
  };
}
