import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Mirror } from '../../freshness/mirror.js';
import { CHANGE_TYPES, type ChangesRepository } from '../../store/changes-repository.js';
import { resolveAreas } from '../area-param.js';
import { principalOf } from '../plugins/auth.js';
import { Problem } from '../problem.js';
import { problemResponses } from '../schemas/common.js';

const csv = (values: readonly string[]) => `^(${values.map((v) => v.replace('.', '\\.')).join('|')})(,(${values.map((v) => v.replace('.', '\\.')).join('|')}))*$`;

/**
 * GET /v1/changes: the change feed. Every change a sync applied, as an event with a monotonic cursor,
 * oldest first, after `since`. Every keyed plan; `perPage` capped by the plan.
 */
export function registerChangesRoutes(app: FastifyInstance, deps: { changes: ChangesRepository; mirror: Mirror; config: Config; clock: () => Date }): void {
  app.get(
    '/v1/changes',
    {
      schema: {
        operationId: 'listChanges',
        summary: 'Changes to listings, as a feed',
        description:
          'Every change the mirror\'s syncs applied, oldest first, after the cursor `since`: `listing.listed`, `listing.price_changed` (oldPrice, newPrice, pctChange), ' +
          '`listing.status_changed` (fromStatus, toStatus: delisted, relisted); each with the listing summary after the change. Continue from `meta.next`; an empty ' +
          `page means nothing newer yet (poll again with the same cursor). Events are kept ${deps.config.changesRetentionDays} days (CHANGES_RETENTION_DAYS): a cursor older than that is 410 CURSOR_EXPIRED. Any keyed plan.`,
        tags: ['changes'],
        querystring: Type.Object(
          {
            since: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'The cursor to continue from (`meta.next` of the previous page); 0 or absent: the oldest kept.' })),
            types: Type.Optional(Type.String({ pattern: csv(CHANGE_TYPES), description: `Comma-separated event types: ${CHANGE_TYPES.join(', ')}.` })),
            kind: Type.Optional(Type.Enum(['rental', 'sale'])),
            areas: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}(,[0-9]{1,7}){0,49}$', maxLength: 400, description: 'Area ids (with the areas below them).' })),
            perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Events a page, 1-500, default 100, capped by the plan.' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              data: Type.Array(
                Type.Object({
                  id: Type.String({ description: 'The event\'s cursor.' }),
                  type: Type.String(),
                  occurredAt: Type.String({ format: 'date-time', description: 'When the sync applied it (UTC).' }),
                  listingId: Type.String(),
                  kind: Type.String(),
                  listing: Type.Ref('ListingSummary'),
                  oldPrice: Type.Union([Type.Number(), Type.Null()]),
                  newPrice: Type.Number(),
                  pctChange: Type.Union([Type.Number(), Type.Null()]),
                  fromStatus: Type.Union([Type.String(), Type.Null()]),
                  toStatus: Type.String(),
                }),
              ),
              meta: Type.Object({
                dataAge: Type.String({ format: 'date-time', description: 'When this page was read (UTC).' }),
                source: Type.Enum(['cached', 'stale', 'refreshing']),
                freshnessThreshold: Type.Integer(),
                refreshTriggered: Type.Boolean(),
                perPage: Type.Integer(),
                next: Type.String({ description: 'The cursor to continue from.' }),
              }),
            },
            { description: 'One page of events after the cursor, oldest first.' },
          ),
          ...problemResponses(400, 401, 410, 429),
        },
        security: [{ bearerAuth: [] }],
      },
    },
    async (request) => {
      const q = request.query as { since?: string; types?: string; kind?: 'rental' | 'sale'; areas?: string; perPage?: number };
      const since = Number(q.since ?? '0');
      if (since > 0 && since < (await deps.changes.prunedThrough())) {
        throw new Problem('CURSOR_EXPIRED', `Events after ${since} are past the ${deps.config.changesRetentionDays}-day retention; start again with since=0.`);
      }
      const { areaIds } = resolveAreas(q.areas, await deps.mirror.areaTree());
      const perPage = Math.min(q.perPage ?? 100, deps.config.plans[principalOf(request).plan].maxPerPage);
      const events = await deps.changes.page(since, perPage, { types: q.types?.split(','), kind: q.kind, areaIds });
      return {
        data: events.map((e) => ({ id: String(e.id), type: e.type, occurredAt: e.occurredAt, listingId: e.listingId, kind: e.kind, ...e.data })),
        meta: {
          dataAge: deps.clock().toISOString(),
          source: 'cached' as const,
          freshnessThreshold: deps.config.freshness.searchSeconds,
          refreshTriggered: false,
          perPage,
          next: String(events.at(-1)?.id ?? since),
        },
      };
    },
  );
}
