import type { Metrics } from '../../metrics/metrics.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import { CHANGE_TYPES, changeBody, changeFilterOf } from '../../domain/change.js';
import type { ReadService } from '../../read/read-service.js';
import type { ChangeTail } from '../../notify/change-tail.js';
import type { ChangesRepository } from '../../store/changes-repository.js';
import { resolveAreas } from '../area-param.js';
import { principalOf } from '../plugins/auth.js';
import { invalidParams, Problem } from '../problem.js';
import { ChangesQuery, ChangesStreamQuery } from '../schemas/change-query.js';
import { Nullable } from '../../wire/common.js';
import { problemResponses } from '../schemas/common.js';
import { EventStreamWriter } from '../sse.js';

/** Events a stream reads from the log at once. */
const STREAM_BATCH = 200;

const ChangeItem = Type.Object(
  {
    id: Type.String({ description: "The event's cursor." }),
    type: Type.String({ description: `One of ${CHANGE_TYPES.join(', ')} (open: new types may come).` }),
    occurredAt: Type.String({ format: 'date-time', description: 'When the sync applied it (UTC).' }),
    listingId: Nullable(Type.String({ description: 'The listing (null for a building event).' })),
    kind: Nullable(Type.String({ description: '`rental` or `sale` (null for a building event).' })),
    listing: Type.Optional(Type.Ref('ListingSummary')),
    oldPrice: Type.Optional(Nullable(Type.Number({ description: 'Dollars before the change (null for a new listing).' }))),
    newPrice: Type.Optional(Type.Number({ description: 'Dollars after the change.' })),
    pctChange: Type.Optional(Nullable(Type.Number({ description: 'Percent, rounded to 0.01.' }))),
    fromStatus: Type.Optional(Nullable(Type.String())),
    toStatus: Type.Optional(Type.String()),
    buildingId: Type.Optional(Type.String({ description: 'building.updated: the building.' })),
    building: Type.Optional(Type.Ref('Building')),
    changedFields: Type.Optional(
      Type.Array(Type.String(), { description: "building.updated: the building's top-level fields that changed." }),
    ),
  },
  {
    description:
      'A listing event has listing, oldPrice, newPrice, pctChange, fromStatus and toStatus; a building event has buildingId, building and changedFields.',
  },
);

export interface ChangesRouteDeps {
  changes: ChangesRepository;
  tail: ChangeTail;
  reads: ReadService;
  config: Config;
  clock: () => Date;
  /** Where open change streams are counted. */
  metrics?: Metrics;
}

/** The cursor to start after; 410 when retention removed events after it. */
async function startAfter(deps: ChangesRouteDeps, since: string | undefined): Promise<number> {
  const head = await deps.changes.latestId();
  if (since === 'latest') return head;
  const cursor = Number(since ?? '0');
  // A cursor no event has reached yet is a mistake (a typo, another database's cursor): waiting on it would miss every event up to it.
  if (cursor > head)
    throw invalidParams([
      { name: 'since', in: 'query', message: `is beyond the newest event, ${head}; use since=latest to start from now` },
    ]);
  if (cursor > 0 && cursor < (await deps.changes.prunedThrough())) {
    throw new Problem(
      'CURSOR_EXPIRED',
      `Events after ${cursor} are past the ${deps.config.changesRetentionDays}-day retention; start again with since=0.`,
    );
  }
  return cursor;
}

/**
 * Sends the events after `cursor` matching `filter` to `stream` as they are applied, with a heartbeat every
 * `changesStream.heartbeatSeconds` when nothing else comes, until the stream ends or `signal` aborts.
 */
async function sendEvents(
  deps: ChangesRouteDeps,
  stream: EventStreamWriter,
  after: number,
  filter: ReturnType<typeof changeFilterOf>,
  signal: AbortSignal,
): Promise<void> {
  const { heartbeatSeconds } = deps.config.changesStream;
  let cursor = after;
  while (stream.open) {
    // The head is read first: every matching event up to it is in the page that follows, so waiting
    // past it (not past the last event sent, which filtered-out events may leave behind) loses none.
    const head = await deps.changes.latestId();
    const events = await deps.changes.page(cursor, STREAM_BATCH, filter);
    for (const e of events) await stream.event(String(e.id), e.type, changeBody(e));
    if (events.length) cursor = events.at(-1)!.id;
    if (events.length === STREAM_BATCH) continue;
    const seen = Math.max(head, cursor);
    const news = await deps.tail.wait(seen, heartbeatSeconds, signal);
    if (!news && stream.open) await stream.comment(`heartbeat ${deps.clock().toISOString()}`);
  }
}

/**
 * GET /v1/changes (the feed: every keyed plan, `perPage` capped by the plan) and GET
 * /v1/changes/stream (the same events as Server-Sent Events, from `featurePlans.changesStream` up).
 */
export function registerChangesRoutes(fastify: FastifyInstance, deps: ChangesRouteDeps): void {
  registerListChanges(fastify, deps);
  registerStreamChanges(fastify, deps);
}

/** GET /v1/changes. */
function registerListChanges(fastify: FastifyInstance, deps: ChangesRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/changes',
    {
      schema: {
        operationId: 'listChanges',
        summary: 'Changes to listings, as a feed',
        description:
          "Every change the mirror's syncs applied, oldest first, after the cursor `since`: `listing.listed`, `listing.price_changed` (oldPrice, newPrice, pctChange), " +
          '`listing.status_changed` (fromStatus, toStatus: delisted, relisted), each with the listing summary after the change; `building.updated` (the building ' +
          "after the change and `changedFields`). Filters as on search: kind, areas, price and bedrooms (the listing's after the change; `kind`, price and " +
          'bedroom filters keep listing events only). Continue from `meta.next`; an empty page means nothing newer yet (poll again with the same cursor). ' +
          `Events are kept ${deps.config.changesRetentionDays} days (CHANGES_RETENTION_DAYS): a cursor older than that is 410 CURSOR_EXPIRED. Any keyed plan.`,
        tags: ['changes'],
        querystring: ChangesQuery,
        response: {
          200: Type.Object(
            {
              data: Type.Array(ChangeItem),
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
      const q = request.query;
      const since = await startAfter(deps, q.since);
      const tree = await deps.reads.areaTree();
      resolveAreas(q.areas, tree);
      const perPage = Math.min(q.perPage ?? 100, deps.config.plans[principalOf(request).plan].maxPerPage);
      const events = await deps.changes.page(since, perPage, changeFilterOf(q, tree));
      return {
        data: events.map(changeBody) as never,
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

/** The stream's resumption header, as browsers send it on reconnect. */
const LastEventIdHeader = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,15}$',
      description: 'The id of the last event received: the stream continues after it (takes precedence over `since`).',
    }),
  ),
});

/** The stream's answers: an endless event stream, or a problem before it starts. */
const streamResponses = {
  200: {
    description: 'An endless event stream: `retry:`, then events and heartbeats.',
    content: {
      'text/event-stream': {
        schema: Type.String({ description: 'id: 20337\\nevent: listing.price_changed\\ndata: {"id":"20337",...}' }),
      },
    },
  },
  ...problemResponses(400, 401, 403, 410, 429),
};

/** GET /v1/changes/stream, with the streams open on this instance (ended before the server closes). */
function registerStreamChanges(fastify: FastifyInstance, deps: ChangesRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { heartbeatSeconds, maxPerKey } = deps.config.changesStream;
  const streamPlan = deps.config.featurePlans.changesStream;
  const openBySubject = new Map<string, number>();
  const open = new Set<EventStreamWriter>();
  // Streams never end by themselves: end them before the server waits for its connections to close.
  fastify.addHook('preClose', async () => {
    for (const stream of open) stream.end();
  });

  app.get(
    '/v1/changes/stream',
    {
      config: { minPlan: streamPlan, queryToken: true },
      schema: {
        operationId: 'streamChanges',
        summary: 'Changes to listings, live (Server-Sent Events)',
        description:
          'The change feed as a `text/event-stream` that stays open: each event is sent as it is applied, with `id:` its cursor, `event:` its type and `data:` ' +
          'the event as in GET /v1/changes. Resume with the `Last-Event-ID` header (browsers send it on reconnect) or `since`: no event is lost or repeated. ' +
          `A comment line (\`: heartbeat\`) comes every ${heartbeatSeconds} s (CHANGES_STREAM_HEARTBEAT_SECONDS) when nothing else does. Filters as on the feed. ` +
          `From the ${streamPlan} plan up (MIN_PLAN_CHANGES_STREAM); at most ${maxPerKey} open streams a key on one instance (CHANGES_STREAM_MAX_PER_KEY), ` +
          'a further one is 429. Connecting counts as one request toward the limits. A cursor past retention is 410 CURSOR_EXPIRED. ' +
          "From a browser, `new EventSource('/v1/changes/stream?access_token=<key>')`: the key may come as `access_token` on this endpoint only.",
        tags: ['changes'],
        querystring: ChangesStreamQuery,
        headers: LastEventIdHeader,
        response: streamResponses,
        security: [{ bearerAuth: [] }, { accessTokenQuery: [] }],
      },
    },
    async (request, reply) => {
      const q = request.query;
      const cursor = await startAfter(deps, request.headers['last-event-id'] ?? q.since);
      const tree = await deps.reads.areaTree();
      resolveAreas(q.areas, tree);
      const filter = changeFilterOf(q, tree);
      const subject = principalOf(request).subject;
      const held = openBySubject.get(subject) ?? 0;
      if (held >= maxPerKey) {
        throw new Problem('RATE_LIMIT_EXCEEDED', `This key already holds ${held} open streams (at most ${maxPerKey}); close one first.`, {
          headers: { 'Retry-After': '60' },
          retryAfter: 60,
        });
      }
      openBySubject.set(subject, held + 1);
      const stream = new EventStreamWriter(reply, 3);
      open.add(stream);
      deps.metrics?.changeStreams.inc();
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      try {
        await sendEvents(deps, stream, cursor, filter, gone.signal);
      } catch (error) {
        request.log.warn({ err: (error as Error).message }, 'change stream ended by an error');
      } finally {
        stream.end();
        open.delete(stream);
        deps.metrics?.changeStreams.dec();
        const left = (openBySubject.get(subject) ?? 1) - 1;
        if (left) openBySubject.set(subject, left);
        else openBySubject.delete(subject);
      }
    },
  );
}
