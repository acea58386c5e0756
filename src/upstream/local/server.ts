import Fastify, { type FastifyInstance } from 'fastify';
import { buildSchema, graphql, type GraphQLSchema } from 'graphql';
import type { LocalMarket } from './market.js';
import { rootResolvers } from './resolvers.js';
import { LOCAL_UPSTREAM_SDL } from './schema.graphql.js';

/**
 * Faults the local upstream can inject, for tests and benchmarks: added latency (milliseconds), and
 * the share (0-1) of requests answered with a 503, a 403 bot block, a malformed body, or never answered.
 */
export interface Faults {
  latencyMs: number;
  errorRate: number;
  blockRate: number;
  malformedRate: number;
  hangRate: number;
}

export const NO_FAULTS: Faults = { latencyMs: 0, errorRate: 0, blockRate: 0, malformedRate: 0, hangRate: 0 };

/** A running local upstream: its GraphQL URL, its market, its fault settings and request count. */
export interface LocalUpstream {
  url: string;
  market: LocalMarket;
  faults: Faults;
  requestCount: () => number;
  close: () => Promise<void>;
}

/**
 * Starts the local upstream on loopback (`port` 0 picks a free one). It answers GraphQL `POST /` with
 * `{query, variables}` like the real site, and `PUT /__admin/faults` with a partial {@link Faults}.
 */
export async function startLocalUpstream(market: LocalMarket, options: { port?: number; host?: string } = {}): Promise<LocalUpstream> {
  const schema: GraphQLSchema = buildSchema(LOCAL_UPSTREAM_SDL);
  const root = rootResolvers(market);
  const faults: Faults = { ...NO_FAULTS };
  let requests = 0;
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_000_000 });
  const hanging = new Set<() => void>();

  app.post('/', async (request, reply) => {
    requests++;
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    const roll = Math.random();
    if (roll < faults.hangRate) {
      await new Promise<void>((resolve) => hanging.add(resolve));
      return reply.code(504).send();
    }
    if (roll < faults.hangRate + faults.blockRate) return reply.code(403).type('text/html').send('<html>Access denied</html>');
    if (roll < faults.hangRate + faults.blockRate + faults.errorRate) return reply.code(503).send({ message: 'unavailable' });
    if (roll < faults.hangRate + faults.blockRate + faults.errorRate + faults.malformedRate) return reply.type('application/json').send('{"data": {"search');
    const body = request.body as { query?: unknown; variables?: Record<string, unknown> } | undefined;
    if (!body || typeof body.query !== 'string') return reply.code(400).send({ errors: [{ message: 'query must be a string' }] });
    const result = await graphql({ schema, source: body.query, rootValue: root, variableValues: body.variables ?? {} });
    return reply.send(result);
  });
  app.put('/__admin/faults', async (request) => {
    Object.assign(faults, request.body as Partial<Faults>);
    return faults;
  });
  app.get('/__admin/health', async () => ({ ok: true, requests }));

  const address = await app.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1' });
  return {
    url: `${address}/`,
    market,
    faults,
    requestCount: () => requests,
    close: async () => {
      for (const release of hanging) release();
      await app.close();
    },
  };
}
