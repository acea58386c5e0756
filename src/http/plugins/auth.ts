import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config, Plan } from '../../config.js';
import { digestsEqual, isWellFormedKey, keyDigest } from '../../domain/api-key.js';
import type { KeysRepository } from '../../store/keys-repository.js';
import { Problem } from '../problem.js';

/** Who is calling: the plan in force, and the subject limits are counted against. */
export interface Principal {
  plan: Plan;
  keyId: string | null;
  /** `key:<id>` for a key, `ip:<address>` for an anonymous caller. */
  subject: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The route answers anonymous callers as the Free plan. */
    anonymous?: boolean;
  }
}

const unauthorized = (code: 'MISSING_API_KEY' | 'INVALID_API_KEY' | 'EXPIRED_API_KEY', detail: string) =>
  new Problem(401, code, detail, { headers: { 'WWW-Authenticate': code === 'MISSING_API_KEY' ? 'Bearer' : 'Bearer error="invalid_token"' } });

/**
 * Resolves `Authorization: Bearer <key>` to a {@link Principal} on every /v1 request. No header: the
 * Free plan on routes marked `anonymous`, 401 MISSING_API_KEY elsewhere. A malformed, unknown or
 * revoked key: 401 INVALID_API_KEY everywhere (never a fall-back to anonymous); an expired one:
 * 401 EXPIRED_API_KEY.
 */
export function registerAuth(app: FastifyInstance, deps: { keys: KeysRepository; config: Config; clock: () => Date }): void {
  app.decorateRequest('principal', null as unknown as Principal);
  // last_used_at is kept to the minute: one write per key a minute, not one per request.
  const lastTouched = new Map<string, number>();
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (!request.url.startsWith('/v1/') || request.url.startsWith('/v1/openapi.json') || request.url.startsWith('/v1/health')) return;
    const header = request.headers.authorization;
    if (!header) {
      if (request.routeOptions.config?.anonymous) {
        request.principal = { plan: 'free', keyId: null, subject: `ip:${request.ip}` };
        return;
      }
      throw unauthorized('MISSING_API_KEY', 'This endpoint needs an API key: send Authorization: Bearer <key>.');
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match || !isWellFormedKey(match[1], deps.config.apiKeyPrefix)) {
      throw unauthorized('INVALID_API_KEY', `The Authorization header must be "Bearer ${deps.config.apiKeyPrefix}_<uuid>".`);
    }
    const digest = keyDigest(match[1], deps.config.apiKeyPepper);
    const row = await deps.keys.findByDigest(digest);
    if (!row || !digestsEqual(row.digest, digest) || row.revoked_at) throw unauthorized('INVALID_API_KEY', 'The API key is unknown or revoked.');
    const now = deps.clock();
    if (row.expires_at && Date.parse(row.expires_at) <= now.getTime()) throw unauthorized('EXPIRED_API_KEY', `The API key expired at ${row.expires_at}.`);
    request.principal = { plan: row.plan as Plan, keyId: row.id, subject: `key:${row.id}` };
    if (now.getTime() - (lastTouched.get(row.id) ?? 0) >= 60_000) {
      lastTouched.set(row.id, now.getTime());
      // Last use is bookkeeping: do not hold the answer for it.
      void deps.keys.touch(row.id, now.toISOString()).catch(() => undefined);
    }
  });
}
