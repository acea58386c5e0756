import Fastify, { type FastifyInstance } from 'fastify';
import { buildSchema, graphql, type GraphQLSchema } from 'graphql';
import type { LocalMarket } from './market.js';
import { rootResolvers } from './resolvers.js';
import { LOCAL_UPSTREAM_SDL } from './schema.graphql.js';

/**
 * Faults the local upstream can inject, for tests and benchmarks: added latency (milliseconds), the
 * share (0-1) of requests answered with a 503, a 403 bot block, a malformed body, or never answered,
 * and a request count after which every request fails.
 */
export interface Faults {
  latencyMs: number;
  errorRate: number;
  blockRate: number;
  malformedRate: number;
  hangRate: number;
  /** When above 0: every GraphQL request after this many answers 503 (an upstream dying mid-crawl). */
  failAfter: number;
}

export const NO_FAULTS: Faults = { latencyMs: 0, errorRate: 0, blockRate: 0, malformedRate: 0, hangRate: 0, failAfter: 0 };

/**
 * Parses fault settings such as `latencyMs=200,errorRate=0.1` (the `LOCAL_UPSTREAM_FAULTS` variable).
 * @throws Error on an unknown name or a value that is not a non-negative number (rates at most 1).
 */
export function parseFaults(text: string): Partial<Faults> {
  const out: Partial<Faults> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [name, raw] = part.split('=');
    const value = Number(raw);
    if (!(name in NO_FAULTS)) throw new Error(`unknown fault "${name}" (known: ${Object.keys(NO_FAULTS).join(', ')})`);
    if (!Number.isFinite(value) || value < 0 || (name.endsWith('Rate') && value > 1)) throw new Error(`bad value for fault ${name}: "${raw}"`);
    out[name as keyof Faults] = value;
  }
  return out;
}

/** A running local upstream: its GraphQL URL, admin URL, market, fault settings and request count. */
export interface LocalUpstream {
  url: string;
  adminUrl: string;
  market: LocalMarket;
  faults: Faults;
  requestCount: () => number;
  close: () => Promise<void>;
}

/**
 * Starts the local upstream on loopback (`port` 0 picks a free one). It answers GraphQL `POST /` with
 * `{query, variables}` like the real site. An admin server on its own loopback port answers
 * `GET /faults` and `PUT /faults` (a partial {@link Faults}). `beforeRequest` runs before each GraphQL
 * request (the market clock catches up there).
 */
export async function startLocalUpstream(
  market: LocalMarket,
  options: { port?: number; adminPort?: number; host?: string; faults?: Partial<Faults>; beforeRequest?: () => void } = {},
): Promise<LocalUpstream> {
  const schema: GraphQLSchema = buildSchema(LOCAL_UPSTREAM_SDL);
  const root = rootResolvers(market);
  const faults: Faults = { ...NO_FAULTS, ...options.faults };
  let requests = 0;
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_000_000 });
  const hanging = new Set<() => void>();

  app.post('/', async (request, reply) => {
    requests++;
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    if (faults.failAfter > 0 && requests > faults.failAfter) return reply.code(503).send({ message: 'unavailable' });
    const roll = Math.random();
    if (roll < faults.hangRate) {
      await new Promise<void>((resolve) => hanging.add(resolve));
      return reply.code(504).send();
    }
    if (roll < faults.hangRate + faults.blockRate) return reply.code(403).type('text/html').send('<html>Access denied</html>');
    if (roll < faults.hangRate + faults.blockRate + faults.errorRate) return reply.code(503).send({ message: 'unavailable' });
    if (roll < faults.hangRate + faults.blockRate + faults.errorRate + faults.malformedRate) return reply.type('application/json').send('{"data": {"search');
    options.beforeRequest?.();
    const body = request.body as { query?: unknown; variables?: Record<string, unknown> } | undefined;
    if (!body || typeof body.query !== 'string') return reply.code(400).send({ errors: [{ message: 'query must be a string' }] });
    const result = await graphql({ schema, source: body.query, rootValue: root, variableValues: body.variables ?? {} });
    return reply.send(result);
  });
  const admin: FastifyInstance = Fastify({ logger: false });
  admin.get('/faults', async () => faults);
  admin.put('/faults', async (request, reply) => {
    try {
      const body = request.body as Record<string, unknown>;
      Object.assign(faults, parseFaults(Object.entries(body ?? {}).map(([k, v]) => `${k}=${v}`).join(',')));
      return faults;
    } catch (error) {
      return reply.code(400).send({ error: (error as Error).message });
    }
  });
  admin.get('/stats', async () => ({ requests }));

  const host = options.host ?? '127.0.0.1';
  const address = await app.listen({ port: options.port ?? 0, host });
  const adminAddress = await admin.listen({ port: options.adminPort ?? 0, host });
  return {
    url: `${address}/`,
    adminUrl: adminAddress,
    market,
    faults,
    requestCount: () => requests,
    close: async () => {
      for (const release of hanging) release();
      await Promise.all([app.close(), admin.close()]);
    },
  };
}
