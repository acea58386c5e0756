import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AREAS_SCOPE, type ScopesRepository } from '../../store/scopes-repository.js';
import { Nullable } from '../schemas/common.js';

/** GET /v1/health: liveness, upstream circuit state, and each sync scope's last success and error. */
export function registerHealthRoutes(app: FastifyInstance, deps: { scopes: ScopesRepository; circuitState: () => string; nextRefreshAt: (lastSuccessAt: string | null) => string | null }): void {
  app.get(
    '/v1/health',
    {
      schema: {
        summary: 'Service health',
        description: 'No key needed. `upstream.circuit` is `open` while the upstream is failing and calls to it are refused.',
        tags: ['meta'],
        response: {
          200: Type.Object({
            status: Type.String(),
            upstream: Type.Object({ circuit: Type.String() }),
            scopes: Type.Array(
              Type.Object({
                scope: Type.String(),
                lastSuccessAt: Nullable(Type.String()),
                lastAttemptAt: Nullable(Type.String()),
                lastError: Nullable(Type.String()),
                lastErrorAt: Nullable(Type.String()),
                listingCount: Nullable(Type.Integer()),
                nextRefreshAt: Nullable(Type.String()),
              }),
            ),
          }),
        },
      },
    },
    async () => {
      const circuit = deps.circuitState();
      return {
        status: circuit === 'open' ? 'degraded' : 'ok',
        upstream: { circuit },
        scopes: (await deps.scopes.all()).map((s) => ({
          scope: s.scope,
          lastSuccessAt: s.last_success_at,
          lastAttemptAt: s.last_attempt_at,
          lastError: s.last_error,
          lastErrorAt: s.last_error_at,
          listingCount: s.listing_count,
          nextRefreshAt: s.scope === AREAS_SCOPE ? null : deps.nextRefreshAt(s.last_success_at),
        })),
      };
    },
  );
}
