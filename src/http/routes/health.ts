import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { SearchIndexStateSchema, type SearchIndexState } from '../../search/search-index.js';
import { EstimatesStateSchema, type EstimatesState } from '../../estimate/estimator.js';
import { ValuationStateSchema, type ValuationState } from '../../estimate/valuation.js';
import type { ListingsRepository } from '../../store/listings-repository.js';
import { WalCheckpointsStateSchema, type WalCheckpointsState } from '../../store/wal-checkpoints.js';
import { AREAS_SCOPE, scopeFailing, type CrawlReport, type ScopesRepository } from '../../store/scopes-repository.js';
import type { UpstreamClient } from '../../upstream/client.js';
import { Nullable } from '../../wire/common.js';
import { NoQuery, problemResponses } from '../schemas/common.js';

const HydrationHealthSchema = Type.Object({
  backlog: Type.Integer({ description: 'Active listings whose details (amenities, listing date, building...) are not fetched yet.' }),
  parked: Type.Integer({
    description:
      'Active listings whose details failed HYDRATION_MAX_FAILURES times: left out of the backlog until a crawl sees them change.',
  }),
  hydrated: Type.Integer({ description: 'Listings whose details this instance fetched since it started.' }),
  running: Type.Boolean({
    description: 'Whether this instance is hydrating the backlog now (after a first sync: every listing, in the background).',
  }),
  failedBatches: Type.Integer({
    description: 'Detail requests that failed after their retries on this instance since it started (each counted against its listings).',
  }),
  lastError: Nullable(Type.String({ description: 'The last failed detail request or given-up run: its cause.' })),
  lastErrorAt: Nullable(Type.String({ description: 'When it failed (UTC).' })),
  lastCompletedAt: Nullable(Type.String({ description: 'When the last background run that emptied the backlog ended (UTC).' })),
  nextAttemptAt: Nullable(Type.String({ description: 'When a background run that gave up is tried again (UTC); null while none waits.' })),
});

const WebhookHealthSchema = Type.Object({
  running: Type.Boolean({ description: 'Whether this instance delivers webhooks (the worker does; API-only instances do not).' }),
  inFlight: Type.Integer({ description: 'Attempts under way on this instance.' }),
  pending: Type.Integer({ description: 'Deliveries not yet delivered nor given up, due now or later (every instance).' }),
  due: Type.Integer({ description: 'Deliveries due now.' }),
  oldestDueAt: Nullable(Type.String({ description: 'When the oldest due delivery fell due (UTC); null when none is due.' })),
  deadLetters: Type.Integer({ description: 'Deliveries given up after their last attempt.' }),
  lastError: Nullable(
    Type.String({ description: "The last failed delivery pass (the dispatcher's, not a receiver's failure): its cause." }),
  ),
  lastErrorAt: Nullable(Type.String({ description: 'When it failed (UTC).' })),
});

/** Hydration's state as /v1/health shows it. */
export type HydrationHealth = Static<typeof HydrationHealthSchema>;
/** Webhook delivery's state as /v1/health shows it. */
export type WebhookHealth = Static<typeof WebhookHealthSchema>;

/** The background jobs' state, read by /v1/health (runtime.ts assembles it from the jobs themselves). */
export interface BackgroundJobs {
  /** The last crawl report of each listing scope (parts and splits). */
  crawlReports(): CrawlReport[];
  /** Whether a sync of `scope` runs on this instance now. */
  running(scope: string): boolean;
  hydration(): Promise<HydrationHealth>;
  webhooks(): Promise<WebhookHealth>;
  /** The search index of this instance. */
  searchIndex(): SearchIndexState;
  /** The comparables the estimates are drawn from, on this instance. */
  estimates(): EstimatesState;
  /** The valuation that stores each active listing's price position after a sync. */
  valuation(): ValuationState;
  /** A SQLite file's write-ahead log checkpoints in their thread; null on PostgreSQL or with SQLITE_CHECKPOINT_SECONDS 0. */
  walCheckpoints(): WalCheckpointsState | null;
}

const HealthSchema = Type.Object({
  status: Type.Enum(['ok', 'degraded', 'unavailable'], {
    description:
      "`ok`: data is served and the upstream answers. `degraded`: data is served, but the upstream circuit is open, a scope's latest sync failed, or the background hydration gave up and waits to try again (answers may be stale or lack details). " +
      '`unavailable` (HTTP 503): the mirror holds no listing to serve.',
  }),
  upstream: Type.Object({
    circuit: Type.Enum(['closed', 'open', 'half-open'], {
      description: '`open` while the upstream is failing and calls to it are refused; no refresh starts then.',
    }),
    queued: Type.Integer({ description: 'Upstream calls waiting for their turn.' }),
    blockedUntil: Nullable(
      Type.String({ description: 'While a 403 bot block is waited out: until when (UTC); nothing is asked of the upstream before.' }),
    ),
    droppedFields: Type.Array(Type.String(), {
      description: 'Fields the upstream rejected (`Type.field`) and the mirror no longer asks for.',
    }),
  }),
  hydration: HydrationHealthSchema,
  webhooks: WebhookHealthSchema,
  searchIndex: SearchIndexStateSchema,
  estimates: EstimatesStateSchema,
  valuation: ValuationStateSchema,
  walCheckpoints: Nullable(WalCheckpointsStateSchema),
  scopes: Type.Array(
    Type.Object({
      scope: Type.String(),
      lastSuccessAt: Nullable(Type.String()),
      lastAttemptAt: Nullable(Type.String()),
      lastError: Nullable(Type.String()),
      lastErrorAt: Nullable(Type.String()),
      failing: Type.Boolean({ description: 'The latest sync of this scope failed.' }),
      parts: Nullable(
        Type.Integer({
          description:
            "Searches the last crawl took (a scope over the upstream's result cap is split by sub-area, price band and bedrooms).",
        }),
      ),
      splits: Nullable(Type.Integer({ description: 'How many searches of the last crawl were over the cap and split.' })),
      complete: Nullable(
        Type.Boolean({
          description: 'Whether every part of the last crawl fitted under the cap (only then are vanished listings taken off the market).',
        }),
      ),
      listingCount: Nullable(Type.Integer()),
      running: Type.Boolean({ description: 'Whether a sync of this scope runs on this instance now.' }),
      nextRefreshAt: Nullable(Type.String()),
    }),
  ),
});

/**
 * GET /v1/health: status for load balancers (200 `ok` or `degraded`, 503 `unavailable`), the upstream
 * circuit and queue, each sync scope's last success and error, and the background jobs (hydration, webhook
 * delivery): running or not, progress, last error and when, and the next attempt.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  deps: {
    scopes: ScopesRepository;
    listings: ListingsRepository;
    upstream: Pick<UpstreamClient, 'circuitState' | 'queued' | 'blockedUntil' | 'droppedFields'>;
    jobs: BackgroundJobs;
    /** When a scope whose last success was at the given instant is next due (null: its schedule is off). */
    nextRefreshAt: (scope: string, lastSuccessAt: string | null) => string | null;
  },
): void {
  app.get(
    '/v1/health',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'getHealth',
        summary: 'Service health',
        security: [],
        description:
          'No key needed, not counted. 200 while data is served (`ok` or `degraded`), 503 `unavailable` when the mirror holds no listing.',
        tags: ['meta'],
        querystring: NoQuery,
        response: {
          200: { ...HealthSchema, description: 'Data is served: `ok`, or `degraded` (answers may be stale).' },
          503: { ...HealthSchema, description: 'Nothing to serve yet: `unavailable`.' },
          ...problemResponses(400),
        },
      },
    },
    async (_request, reply) => {
      const circuit = deps.upstream.circuitState();
      const [scopes, hasData, hydration, webhooks] = await Promise.all([
        deps.scopes.all(),
        deps.listings.hasActive(),
        deps.jobs.hydration(),
        deps.jobs.webhooks(),
      ]);
      const reports = new Map(deps.jobs.crawlReports().map((r) => [r.scope, r]));
      const blocked = deps.upstream.blockedUntil() !== null;
      const degraded = circuit === 'open' || blocked || scopes.some(scopeFailing) || hydration.nextAttemptAt !== null;
      const status = !hasData ? 'unavailable' : degraded ? 'degraded' : 'ok';
      reply.code(status === 'unavailable' ? 503 : 200);
      return {
        status,
        upstream: {
          circuit,
          queued: deps.upstream.queued(),
          blockedUntil: deps.upstream.blockedUntil(),
          droppedFields: deps.upstream.droppedFields(),
        },
        hydration,
        searchIndex: deps.jobs.searchIndex(),
        estimates: deps.jobs.estimates(),
        valuation: deps.jobs.valuation(),
        walCheckpoints: deps.jobs.walCheckpoints(),
        webhooks,
        scopes: scopes.map((s) => ({
          scope: s.scope,
          lastSuccessAt: s.last_success_at,
          lastAttemptAt: s.last_attempt_at,
          lastError: s.last_error,
          lastErrorAt: s.last_error_at,
          failing: scopeFailing(s),
          parts: reports.get(s.scope)?.parts ?? null,
          splits: reports.get(s.scope)?.splits ?? null,
          complete: reports.get(s.scope)?.complete ?? null,
          listingCount: s.listing_count,
          running: deps.jobs.running(s.scope),
          nextRefreshAt: s.scope === AREAS_SCOPE ? null : deps.nextRefreshAt(s.scope, s.last_success_at),
        })),
      };
    },
  );
}
