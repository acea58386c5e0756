import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { ListingsRepository } from '../../store/listings-repository.js';
import { AREAS_SCOPE, scopeFailing, type CrawlReport, type ScopesRepository } from '../../store/scopes-repository.js';
import type { UpstreamClient } from '../../upstream/client.js';
import { Nullable } from '../../wire/common.js';
import { NoQuery, problemResponses } from '../schemas/common.js';

const HealthSchema = Type.Object({
  status: Type.Enum(['ok', 'degraded', 'unavailable'], {
    description:
      '`ok`: data is served and the upstream answers. `degraded`: data is served, but the upstream circuit is open or a scope\'s latest sync failed (answers may be stale). ' +
      '`unavailable` (HTTP 503): the mirror holds no listing to serve.',
  }),
  upstream: Type.Object({
    circuit: Type.Enum(['closed', 'open', 'half-open'], { description: '`open` while the upstream is failing and calls to it are refused; no refresh starts then.' }),
    queued: Type.Integer({ description: 'Upstream calls waiting for their turn.' }),
    blockedUntil: Nullable(Type.String({ description: 'While a 403 bot block is waited out: until when (UTC); nothing is asked of the upstream before.' })),
    droppedFields: Type.Array(Type.String(), { description: 'Fields the upstream rejected (`Type.field`) and the mirror no longer asks for.' }),
  }),
  hydration: Type.Object({
    backlog: Type.Integer({ description: 'Active listings whose details (amenities, listing date, building...) are not fetched yet.' }),
    hydrated: Type.Integer({ description: 'Listings whose details this instance fetched since it started.' }),
    running: Type.Boolean({ description: 'Whether this instance is hydrating the backlog now (after a first sync: every listing, in the background).' }),
  }),
  scopes: Type.Array(
    Type.Object({
      scope: Type.String(),
      lastSuccessAt: Nullable(Type.String()),
      lastAttemptAt: Nullable(Type.String()),
      lastError: Nullable(Type.String()),
      lastErrorAt: Nullable(Type.String()),
      failing: Type.Boolean({ description: 'The latest sync of this scope failed.' }),
      parts: Nullable(Type.Integer({ description: 'Searches the last crawl took (a scope over the upstream\'s result cap is split by sub-area, price band and bedrooms).' })),
      splits: Nullable(Type.Integer({ description: 'How many searches of the last crawl were over the cap and split.' })),
      complete: Nullable(Type.Boolean({ description: 'Whether every part of the last crawl fitted under the cap (only then are vanished listings taken off the market).' })),
      listingCount: Nullable(Type.Integer()),
      nextRefreshAt: Nullable(Type.String()),
    }),
  ),
});

/**
 * GET /v1/health: status for load balancers (200 `ok` or `degraded`, 503 `unavailable`), the upstream
 * circuit and queue, and each sync scope's last success and error.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  deps: {
    scopes: ScopesRepository;
    listings: ListingsRepository;
    upstream: Pick<UpstreamClient, 'circuitState' | 'queued' | 'blockedUntil' | 'droppedFields'>;
    crawls: { crawlReports(): CrawlReport[]; backlog(): Promise<number>; hydrationProgress(): { hydrated: number; running: boolean } };
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
        description: 'No key needed, not counted. 200 while data is served (`ok` or `degraded`), 503 `unavailable` when the mirror holds no listing.',
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
      const [scopes, hasData, backlog] = await Promise.all([deps.scopes.all(), deps.listings.hasActive(), deps.crawls.backlog()]);
      const reports = new Map(deps.crawls.crawlReports().map((r) => [r.scope, r]));
      const blocked = deps.upstream.blockedUntil() !== null;
      const status = !hasData ? 'unavailable' : circuit === 'open' || blocked || scopes.some(scopeFailing) ? 'degraded' : 'ok';
      reply.code(status === 'unavailable' ? 503 : 200);
      return {
        status,
        upstream: { circuit, queued: deps.upstream.queued(), blockedUntil: deps.upstream.blockedUntil(), droppedFields: deps.upstream.droppedFields() },
        hydration: { backlog, ...deps.crawls.hydrationProgress() },
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
          nextRefreshAt: s.scope === AREAS_SCOPE ? null : deps.nextRefreshAt(s.scope, s.last_success_at),
        })),
      };
    },
  );
}
