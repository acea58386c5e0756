import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { PLANS, type Config, type Plan } from '../../config.js';
import { isWellFormedKey, keyDigest } from '../../domain/api-key.js';
import { keyAccess, refusalReason } from '../../domain/subscription.js';
import type { KeyResolver } from '../../access/key-resolver.js';
import type { ApiKeyRow, KeysRepository } from '../../store/keys-repository.js';
import { Problem } from '../problem.js';

/** Authorization values whose digests are held (a value is some 50 bytes, its digest 64). */
const DIGESTS_HELD = 10_000;

/**
 * Who is calling: the plan in force, the key's id (null without a key), and the subject limits are
 * counted against: `key:<digest>` for a key (the same key counts once across every instance and
 * database that holds it), `subscription:<id>` for a key of a subscription (every key it was issued, so a rotation
 * keeps the month's count), `ip:<address>` for an anonymous caller.
 */
export interface Principal {
  plan: Plan;
  keyId: string | null;
  subject: string;
}

/**
 * Who may call a route, set in its `config.access`: `public` (anyone, no principal, not limited),
 * `anonymous` (a key is optional; without one the caller is Free, limited per client IP), `key`
 * (a valid key is required). A route that says nothing needs a key.
 */
export type Access = 'public' | 'anonymous' | 'key';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    access?: Access;
    /** The lowest plan the route serves (a key of a lower plan gets 403 PLAN_REQUIRED). */
    minPlan?: Plan;
    /**
     * The key may come as the `access_token` query parameter (RFC 6750, section 2.3) instead of the header:
     * only for a route a browser cannot send headers to (`EventSource`), whose answer is never stored.
     */
    queryToken?: boolean;
  }
}

const unauthorized = (code: 'MISSING_API_KEY' | 'INVALID_API_KEY' | 'EXPIRED_API_KEY', detail: string) =>
  new Problem(code, detail, { headers: { 'WWW-Authenticate': code === 'MISSING_API_KEY' ? 'Bearer' : 'Bearer error="invalid_token"' } });

/**
 * The web origin a request comes from: its `Origin` header, else the origin of its `Referer` (a browser sends no
 * `Origin` on a same-origin GET, but a `Referer` unless told not to); null when it names neither.
 */
function originOf(request: FastifyRequest): string | null {
  const origin = request.headers.origin;
  if (origin && origin !== 'null') return origin.toLowerCase();
  const referer = request.headers.referer;
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

/** The access rule of the route a request matched (a request no route matched is answered by the 404 handler). */
export function accessOf(request: FastifyRequest): Access {
  return request.is404 ? 'public' : (request.routeOptions.config?.access ?? 'key');
}

/**
 * The digest of the key a request gives (`digests`: those of Authorization values seen lately); null when it needs
 * none (a public route, or none given to an `anonymous` one, which is then given the Free plan by its address).
 * @throws Problem 400 when the key comes both ways, 401 MISSING_API_KEY or INVALID_API_KEY.
 */
function digestOfRequest(request: FastifyRequest, config: Config, digests: LRUCache<string, string>): string | null {
  const access = accessOf(request);
  if (access === 'public') return null;
  const fromQuery = request.routeOptions.config?.queryToken ? (request.query as { access_token?: string }).access_token : undefined;
  if (fromQuery !== undefined && request.headers.authorization !== undefined) {
    throw new Problem('INVALID_PARAMS', 'Send the key in the Authorization header or as access_token, not both (RFC 6750, section 2).', {
      errors: [{ name: 'access_token', in: 'query', message: 'must not come with an Authorization header' }],
    });
  }
  const header = fromQuery !== undefined ? `Bearer ${fromQuery}` : request.headers.authorization;
  if (header === undefined) {
    if (access === 'anonymous') {
      request.principal = { plan: 'free', keyId: null, subject: `ip:${request.ip}` };
      return null;
    }
    throw unauthorized('MISSING_API_KEY', 'This endpoint needs an API key: send Authorization: Bearer <key>.');
  }
  const known = digests.get(header);
  if (known !== undefined) return known;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match || !isWellFormedKey(match[1], config.apiKeyPrefix)) {
    throw unauthorized('INVALID_API_KEY', `The Authorization header must be "Bearer ${config.apiKeyPrefix}_<uuid>".`);
  }
  const digest = keyDigest(match[1], config.apiKeyPepper);
  digests.set(header, digest);
  return digest;
}

/**
 * Checks that the key stored as `row` (undefined: unknown) may make `request` at `now`.
 * @throws Problem 401 INVALID_API_KEY (unknown or revoked) or EXPIRED_API_KEY (expired, or replaced past its grace);
 * 403 SUBSCRIPTION_INACTIVE, ORIGIN_NOT_ALLOWED (a publishable key from another origin) or OPERATION_NOT_ALLOWED.
 */
function checkKeyMayAsk(request: FastifyRequest, row: ApiKeyRow | undefined, now: Date): asserts row is ApiKeyRow {
  if (!row || row.revoked_at) throw unauthorized('INVALID_API_KEY', 'The API key is unknown or revoked.');
  if (row.expires_at && Date.parse(row.expires_at) <= now.getTime())
    throw unauthorized(
      'EXPIRED_API_KEY',
      row.replaced_at
        ? `The API key was replaced by a new one at ${row.replaced_at}; it worked beside it until ${row.expires_at}.`
        : `The API key expired at ${row.expires_at}.`,
    );
  if (row.subscription_status !== null && keyAccess(row.subscription_status) === 'refused') {
    throw new Problem(
      'SUBSCRIPTION_INACTIVE',
      `This key no longer works: ${refusalReason(row.subscription_status)}. See it at /account; a new subscription at /pricing comes with a new key.`,
      {
        members: { subscriptionStatus: row.subscription_status, account: '/account', pricing: '/pricing' },
        headers: { Link: '</account>; rel="help"' },
      },
    );
  }
  if (row.origins) {
    const from = originOf(request);
    if (!from || !row.origins.split(',').includes(from)) {
      throw new Problem(
        'ORIGIN_NOT_ALLOWED',
        `This publishable key is accepted only from ${row.origins.split(',').join(', ')}; this request ${from ? `comes from ${from}` : 'names no origin (Origin or Referer header)'}.`,
      );
    }
  }
  if (row.operations) {
    // The matched route's operation id, never the URL's text.
    const operation = request.routeOptions.schema?.operationId;
    if (!operation || !row.operations.split(',').includes(operation)) {
      throw new Problem(
        'OPERATION_NOT_ALLOWED',
        `This key may call only ${row.operations.split(',').join(', ')}${operation ? `, not ${operation}` : ''}.`,
      );
    }
  }
}

/**
 * Resolves `Authorization: Bearer <key>` (or, on a `queryToken` route, `?access_token=<key>`) to a {@link Principal}, deciding from the matched route's
 * `access` (never from the request's URL text). No header: the Free plan on `anonymous` routes,
 * 401 MISSING_API_KEY on `key` routes. A header that is present but empty, malformed, unknown or
 * revoked: 401 INVALID_API_KEY everywhere (never a fall-back to anonymous); an expired key (or a replaced one past its
 * grace): 401 EXPIRED_API_KEY; a key whose subscription is inactive (domain/subscription.ts): 403 SUBSCRIPTION_INACTIVE; a publishable key from an origin it does not list (or from none): 403 ORIGIN_NOT_ALLOWED; a key limited to
 * some operations, on another route: 403 OPERATION_NOT_ALLOWED. A guard before every handler refuses to run a non-public route without a principal.
 */
export function registerAuth(
  app: FastifyInstance,
  deps: { keys: KeysRepository; resolver: KeyResolver; config: Config; clock: () => Date },
): void {
  app.decorateRequest('principal', null);
  // last_used_at is kept to the minute: one write per key a minute, not one per request.
  const lastTouched = new Map<string, number>();
  // The digest of each well-formed Authorization value given lately: a key's form is checked and its digest made once,
  // not on every request. Whether the key is known, revoked or expired is still the resolver's answer each time.
  const digests = new LRUCache<string, string>({ max: DIGESTS_HELD });
  const digestOf = (request: FastifyRequest) => digestOfRequest(request, deps.config, digests);
  /** Sets the principal of the key stored as `row` (undefined: unknown). @throws Problem when the key may not make this request */
  const admit = (request: FastifyRequest, digest: string, row: ApiKeyRow | undefined): void => {
    const now = deps.clock();
    checkKeyMayAsk(request, row, now);
    request.principal = { plan: row.plan as Plan, keyId: row.id, subject: row.subject ?? `key:${digest}` };
    if (now.getTime() - (lastTouched.get(row.id) ?? 0) >= 60_000) {
      lastTouched.set(row.id, now.getTime());
      // Last use is bookkeeping: do not hold the answer for it.
      void deps.keys.touch(row.id, now.toISOString()).catch(() => undefined);
    }
  };
  /** Admits the request at once when its key is held by the resolver (or it needs none); else the digest to read. @throws Problem */
  const digestToRead = (request: FastifyRequest): string | null => {
    const digest = digestOf(request);
    if (digest === null) return null;
    const known = deps.resolver.known(digest);
    if (known === undefined) return digest;
    admit(request, digest, known ?? undefined);
    return null;
  };
  // A callback hook (see app.ts): a key the resolver holds is admitted without waiting; only one it must read waits.
  // `done` is called outside each try: the hooks after this one run within that call, and their errors are not its own.
  app.addHook('onRequest', (request, _reply, done) => {
    let digest: string | null;
    try {
      digest = digestToRead(request);
    } catch (error) {
      return done(error as Error);
    }
    if (digest === null) return done();
    const asked = digest;
    deps.resolver.find(asked).then((row) => {
      let refused: Error | undefined;
      try {
        admit(request, asked, row);
      } catch (error) {
        refused = error as Error;
      }
      done(refused);
    }, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    if (accessOf(request) !== 'public' && !request.principal)
      return done(unauthorized('MISSING_API_KEY', 'This endpoint needs an API key.'));
    const minPlan = request.is404 ? undefined : request.routeOptions.config?.minPlan;
    if (minPlan && request.principal && PLANS.indexOf(request.principal.plan) < PLANS.indexOf(minPlan)) {
      return done(
        new Problem('PLAN_REQUIRED', `This endpoint is for the ${minPlan} plan and above; this key's plan is ${request.principal.plan}.`),
      );
    }
    done();
  });
}

/** The principal of a request to a non-public route (set by {@link registerAuth}). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized('MISSING_API_KEY', 'This endpoint needs an API key.');
  return request.principal;
}
