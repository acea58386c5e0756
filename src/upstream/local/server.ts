import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  buildSchema,
  execute,
  getNullableType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  parse,
  typeFromAST,
  validate,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { LocalMarket } from './market.js';
import { rootResolvers, SITE_BEHAVIOUR, type Behaviour } from './resolvers.js';
import { sdlWithout } from './schema.graphql.js';
import { holdable, NO_FAULTS, parseFaults, rollFault, type FaultKind, type Faults, type FaultTarget } from '../faults.js';

/** Which fault target a query text is: the detail batches' root fields, the searches', or neither. */
function targetOf(query: unknown): FaultTarget {
  if (typeof query !== 'string') return 'all';
  if (/\b(?:sale|rental)ByListingId\b|\bbuildingBy(?:Sale|Rental)ListingId\b/.test(query)) return 'details';
  if (/\bsearch(?:Sales|Rentals)\b/.test(query)) return 'search';
  return 'all';
}

/** A running local upstream: its GraphQL URL, admin URL, market, fault settings and request count. */
export interface LocalUpstream {
  url: string;
  adminUrl: string;
  market: LocalMarket;
  faults: Faults;
  /** How it behaves where the site is known to limit answers (result cap, promoted edges); change it live. */
  behaviour: Behaviour;
  /** Stops answering these fields (`Type.field`), as the site does when it drops one (drift); [] restores all. */
  removeFields: (fields: string[]) => void;
  requestCount: () => number;
  /**
   * The query text of every GraphQL request answered so far, in arrival order, when started with
   * `recordQueries` (tests read it); otherwise always empty, so a long-running service keeps nothing.
   */
  queries: string[];
  /** Holds every request from now on until the returned release is called (tests: a busy upstream). */
  pause: () => () => void;
  close: () => Promise<void>;
}

/** A GraphQL error as a GraphQL server sends it. */
const graphqlError = (message: string, code: string) => ({ message, extensions: { code } });

/**
 * Enum values given as JSON strings in `variables`: the site rejects them (a May 2026 client commit
 * quotes `found JSON string for GraphQL type SortingAttributeInput! (VALIDATION_INVALID_TYPE_VARIABLE)`);
 * the literal form in the query text is what works. Returns the message, or null when there is none.
 */
function jsonEnumInVariables(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Record<string, unknown>): string | null {
  const find = (type: GraphQLInputType, value: unknown): string | null => {
    const bare = getNullableType(type);
    if (value === null || value === undefined) return null;
    if (bare instanceof GraphQLEnumType) return typeof value === 'string' ? `${bare.name}!` : null;
    if (bare instanceof GraphQLList) {
      for (const item of Array.isArray(value) ? value : [value]) {
        const found = find(bare.ofType, item);
        if (found) return found;
      }
      return null;
    }
    if (bare instanceof GraphQLInputObjectType && typeof value === 'object') {
      for (const [name, field] of Object.entries(bare.getFields())) {
        const found = find(field.type, (value as Record<string, unknown>)[name]);
        if (found) return found;
      }
    }
    return null;
  };
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type as never) as GraphQLInputType | undefined;
    if (!type) continue;
    const found = find(type, variables[definition.variable.name.value]);
    if (found) return `found JSON string for GraphQL type ${found.replace(/!$/, '')}! (VALIDATION_INVALID_TYPE_VARIABLE)`;
  }
  return null;
}

/**
 * The key under which a query text's validation is remembered: the text with the content of every
 * string literal blanked, or null when it cannot be keyed safely (a block string or a comment, where
 * quotes do not pair simply). The schema has no custom scalar, so a string literal's content never
 * decides whether a document is valid (ID and String take any string; an enum refuses every one).
 */
function validationKey(query: string): string | null {
  if (query.includes('"""') || query.includes('#')) return null;
  return query.replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
}

/** How many valid query shapes are remembered before the memory is cleared (a bound, not a tuning). */
const VALIDATED_SHAPES_MAX = 1_000;

/** A PerimeterX block as the site answers it to a datacenter address (its shape, not its values). */
const PERIMETERX_BLOCK = {
  appId: 'PXlocal01',
  jsClientSrc: '/local01/init.js',
  firstPartyEnabled: true,
  vid: '',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostUrl: '/local01/xhr',
  blockScript: '/local01/captcha/captcha.js?a=c&m=0',
};

/** The local upstream's GraphQL: its schema (fields may be removed: drift), the query shapes it found valid, its resolvers. */
interface GraphqlEndpoint {
  schema: GraphQLSchema;
  /**
   * Query shapes this schema found valid. A detail batch of aliased listings is costly to validate and differs from
   * the last only in its ids; remembering valid shapes cut most of GraphQL's CPU in a sync (figures in commit
   * 68f541f). Only successes are kept, so every refusal still comes with its own message.
   */
  validShapes: Set<string>;
  root: ReturnType<typeof rootResolvers>;
}

/** Answers a GraphQL request as the site does (400 for a parse or validation error); keeps its text in `recorded` when given. */
async function answerQuery(graphql: GraphqlEndpoint, request: FastifyRequest, reply: FastifyReply, recorded: string[] | null) {
  const body = request.body as { query?: unknown; variables?: Record<string, unknown> } | undefined;
  if (!body || typeof body.query !== 'string') return reply.code(400).send({ errors: [{ message: 'query must be a string' }] });
  recorded?.push(body.query);
  let document: ReturnType<typeof parse>;
  try {
    document = parse(body.query);
  } catch (error) {
    return reply.code(400).send({ errors: [graphqlError((error as Error).message, 'GRAPHQL_PARSE_FAILED')] });
  }
  // Validation errors (an unknown field, a bad enum value) fail the whole request with HTTP 400.
  const shape = validationKey(body.query);
  if (shape === null || !graphql.validShapes.has(shape)) {
    const invalid = validate(graphql.schema, document);
    if (invalid.length) return reply.code(400).send({ errors: invalid.map((e) => graphqlError(e.message, 'GRAPHQL_VALIDATION_FAILED')) });
    if (shape !== null) {
      if (graphql.validShapes.size >= VALIDATED_SHAPES_MAX) graphql.validShapes.clear();
      graphql.validShapes.add(shape);
    }
  }
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const jsonEnum = operation && jsonEnumInVariables(graphql.schema, operation, body.variables ?? {});
  if (jsonEnum) return reply.code(400).send({ errors: [graphqlError(jsonEnum, 'VALIDATION_INVALID_TYPE_VARIABLE')] });
  const result = await execute({ schema: graphql.schema, document, rootValue: graphql.root, variableValues: body.variables ?? {} });
  return reply.send(result);
}

/** Answers a request with a drawn fault (all but a stall, which delays the request instead), as the site fails. */
async function answerFault(fault: FaultKind, request: FastifyRequest, reply: FastifyReply, hanging: Set<() => void>) {
  if (fault === 'hang') {
    await new Promise<void>((resolve) => hanging.add(resolve));
    return reply.code(504).send();
  }
  if (fault === 'block') return reply.code(403).send(PERIMETERX_BLOCK);
  if (fault === 'error') return reply.code(503).send({ message: 'unavailable' });
  if (fault === 'malformed') return reply.type('application/json').send('{"data": {"search');
  if (fault === 'graphqlError') return reply.send({ errors: [graphqlError('Internal server error', 'INTERNAL_SERVER_ERROR')], data: null });
  if (fault === 'reset') {
    reply.hijack();
    request.raw.socket.destroy();
    return;
  }
}

/**
 * The admin server: `GET /faults` and `PUT /faults` (a partial {@link Faults}), `GET /stats` (requests answered),
 * `POST /market/advance?hours=N` (409 without a market clock).
 */
function adminServer(faults: Faults, requests: () => number, advanceMarket: ((hours: number) => void) | undefined): FastifyInstance {
  const admin: FastifyInstance = Fastify({ logger: false });
  admin.get('/faults', async () => faults);
  admin.put('/faults', async (request, reply) => {
    try {
      const body = request.body as Record<string, unknown>;
      Object.assign(
        faults,
        parseFaults(
          Object.entries(body ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(','),
        ),
      );
      return faults;
    } catch (error) {
      return reply.code(400).send({ error: (error as Error).message });
    }
  });
  admin.get('/stats', async () => ({ requests: requests() }));
  admin.post('/market/advance', async (request, reply) => {
    const hours = Number((request.query as { hours?: string }).hours);
    if (!advanceMarket) return reply.code(409).send({ error: 'the market clock is off (MARKET_CLOCK=off)' });
    if (!Number.isInteger(hours) || hours < 1 || hours > 24 * 365)
      return reply.code(400).send({ error: 'hours must be a whole number from 1 to 8760' });
    advanceMarket(hours);
    return { advancedHours: hours };
  });
  return admin;
}

/**
 * Starts the local upstream on loopback (`port` 0 picks a free one). It answers GraphQL `POST /` with
 * `{query, variables}` like the real site. An admin server on its own loopback port answers
 * `GET /faults` and `PUT /faults` (a partial {@link Faults}). `beforeRequest` runs before each GraphQL
 * request (the market clock catches up there).
 */
export async function startLocalUpstream(
  market: LocalMarket,
  options: {
    port?: number;
    adminPort?: number;
    host?: string;
    faults?: Partial<Faults>;
    behaviour?: Partial<Behaviour>;
    beforeRequest?: () => void;
    /** Keep every query text in `queries` (tests); off by default. */
    recordQueries?: boolean;
    /** Moves the market clock on by this many hours (admin `POST /market/advance?hours=N`); absent without a clock. */
    advanceMarket?: (hours: number) => void;
  } = {},
): Promise<LocalUpstream> {
  const behaviour: Behaviour = { ...SITE_BEHAVIOUR, ...options.behaviour };
  const graphql: GraphqlEndpoint = { schema: buildSchema(sdlWithout([])), validShapes: new Set(), root: rootResolvers(market, behaviour) };
  const faults: Faults = { ...NO_FAULTS, ...options.faults };
  let requests = 0;
  const queries: string[] = [];
  let gate: Promise<void> | null = null;
  let releaseGate: () => void = () => undefined;
  // Closing ends every connection, a request in flight among them: a stopped emulator answers nothing more. Waiting
  // for them kept a runtime's close() over a minute, now and then, after the hydration's faults test.
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_000_000, forceCloseConnections: true });
  const hanging = new Set<() => void>();

  app.post('/', async (request, reply) => {
    requests++;
    while (gate) await gate;
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    if (faults.failAfter > 0 && requests > faults.failAfter) return reply.code(503).send({ message: 'unavailable' });
    const target = targetOf((request.body as { query?: unknown } | undefined)?.query);
    if (faults.on === 'all' || faults.on === target) {
      const fault = rollFault(faults);
      if (fault !== null && fault !== 'stall') return answerFault(fault, request, reply, hanging);
      if (fault === 'stall') await holdable(faults.stallMs, hanging);
    }
    options.beforeRequest?.();
    return answerQuery(graphql, request, reply, options.recordQueries ? queries : null);
  });
  const admin = adminServer(faults, () => requests, options.advanceMarket);

  const host = options.host ?? '127.0.0.1';
  const address = await app.listen({ port: options.port ?? 0, host });
  const adminAddress = await admin.listen({ port: options.adminPort ?? 0, host });
  return {
    url: `${address}/`,
    adminUrl: adminAddress,
    market,
    faults,
    behaviour,
    removeFields: (fields) => {
      graphql.schema = buildSchema(sdlWithout(fields));
      graphql.validShapes.clear();
    },
    requestCount: () => requests,
    queries,
    pause: () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      gate = held;
      releaseGate = () => {
        if (gate === held) gate = null;
        release();
      };
      return releaseGate;
    },
    close: async () => {
      releaseGate();
      for (const release of hanging) release();
      await Promise.all([app.close(), admin.close()]);
    },
  };
}
