import type { KeyResolver } from '../access/key-resolver.js';
import type { PlanLimiters } from '../access/plan-limiters.js';
import type { QuotaMeter } from '../access/quota-meter.js';
import type { Billing } from '../billing/billing.js';
import type { Config } from '../config.js';
import type { BackgroundJobs } from '../http/routes/health.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ChangeTail } from '../notify/change-tail.js';
import type { CityRecords } from '../read/city-records.js';
import type { ReadService } from '../read/read-service.js';
import type { ChangesRepository } from '../store/changes-repository.js';
import type { KeysRepository } from '../store/keys-repository.js';
import type { ListingsRepository } from '../store/listings-repository.js';
import type { ScopesRepository } from '../store/scopes-repository.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { Logger } from 'pino';

/** What the HTTP layer needs; main.ts and the tests assemble it (see runtime.ts). */
export interface AppDeps {
  config: Config;
  reads: ReadService;
  /** NYC Open Data's records: recorded sales and buildings' tax-lot facts. */
  cityRecords: CityRecords;
  keys: KeysRepository;
  /** Monthly quota counts (in memory, written in batches). */
  quotas: QuotaMeter;
  /** API keys by digest, cached. */
  keyResolver: KeyResolver;
  limiters: PlanLimiters;
  scopes: ScopesRepository;
  listings: ListingsRepository;
  /** The change log the sync writes (GET /v1/changes). */
  changes: ChangesRepository;
  /** Wakes open change streams when the log grows. */
  changeTail: ChangeTail;
  /** The upstream client, for its breaker state and queue in /v1/health. */
  upstream: Pick<UpstreamClient, 'circuitState' | 'queued' | 'blockedUntil' | 'droppedFields'>;
  /** The background jobs' state (crawls, hydration, webhook delivery), for /v1/health. */
  jobs: BackgroundJobs;
  /** Where each request is counted and timed by its matched route (served on METRICS_PORT, never here). */
  metrics?: Metrics;
  /** When a scope whose last success was at the given instant is next due (null: scheduler off). */
  nextRefreshAt: (scope: string, lastSuccessAt: string | null) => string | null;
  /** Plans sold through the subscription provider: /pricing, /billing/..., /account (absent: none of them is served). */
  billing?: Billing;
  /** An API-only instance (`serve --api-only`): 503 UNAVAILABLE on every non-public route until the mirror holds a listing. */
  apiOnly?: boolean;
  clock: () => Date;
  /** Logger for requests and the app's own messages (create it with {@link createLogger}). */
  logger: Logger;
}
