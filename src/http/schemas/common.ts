import { Type, type Static, type TSchema } from 'typebox';

/**
 * `schema` or null. A primitive becomes `type: [t, "null"]` (JSON Schema 2020-12 / OpenAPI 3.1), which
 * the response serializer handles far faster than `anyOf`; objects and references use `anyOf`.
 */
export const Nullable = <T extends TSchema>(schema: T) => {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && ['string', 'number', 'integer', 'boolean'].includes(type)) {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  return Type.Union([schema, Type.Null()]);
};

export const Address = Type.Object(
  {
    street: Nullable(Type.String()),
    unit: Nullable(Type.String()),
    city: Nullable(Type.String()),
    state: Nullable(Type.String()),
    zipCode: Nullable(Type.String()),
  },
  { $id: 'Address', description: 'Street address; any part may be unknown (null).' },
);

export const GeoPoint = Type.Object(
  { latitude: Type.Number(), longitude: Type.Number() },
  { $id: 'GeoPoint', description: 'WGS84 position in decimal degrees.' },
);

const metaBase = {
  dataAge: Type.String({ format: 'date-time', description: 'When the data was last confirmed by the upstream (UTC).' }),
  source: Type.Enum(['cached', 'stale', 'refreshing'], {
    description:
      '`cached`: within the freshness threshold. `stale`: older than the threshold; this request started a background refresh. ' +
      '`refreshing`: older than the threshold and a refresh is already running. Stored data is always answered.',
  }),
  freshnessThreshold: Type.Integer({ description: 'Freshness threshold in seconds.' }),
  refreshTriggered: Type.Boolean({ description: 'Whether this request caused a refresh (background, or a synchronous fetch of data not yet stored).' }),
};

export const SingleMeta = Type.Object(metaBase, { $id: 'SingleMeta' });

export const Links = Type.Object(
  {
    self: Type.String(),
    first: Type.String(),
    last: Type.String(),
    prev: Nullable(Type.String()),
    next: Nullable(Type.String()),
  },
  { $id: 'Links', description: 'Paths (beginning with /v1/) echoing the filters with `page` and the `perPage` in effect.' },
);

export const ListMeta = Type.Object(
  {
    ...metaBase,
    total: Type.Integer({ description: 'Number of matching records.' }),
    page: Type.Integer({ description: 'Current page, 1-indexed.' }),
    perPage: Type.Integer({ description: 'Page size in effect (after the plan cap).' }),
    links: Links,
  },
  { $id: 'ListMeta' },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String(),
    code: Type.String({
      description:
        'INVALID_PARAMS, MISSING_API_KEY, INVALID_API_KEY, EXPIRED_API_KEY, NOT_FOUND, RATE_LIMIT_EXCEEDED, QUOTA_EXCEEDED, UPSTREAM_ERROR, UPSTREAM_TIMEOUT, INTERNAL_ERROR',
    }),
    errors: Type.Optional(Type.Array(Type.Object({ name: Type.String(), in: Type.String(), message: Type.String() }))),
    retryAfter: Type.Optional(Type.Integer({ description: 'Seconds to wait before retrying (429).' })),
  },
  { $id: 'Problem', description: 'RFC 9457 problem document, sent as application/problem+json.' },
);

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'INVALID_PARAMS: `errors[]` names each bad or unknown parameter. Nothing is changed.',
  401: 'MISSING_API_KEY, INVALID_API_KEY (malformed, unknown or revoked) or EXPIRED_API_KEY; with `WWW-Authenticate: Bearer`.',
  404: 'NOT_FOUND: neither the mirror nor the upstream has it.',
  429:
    'RATE_LIMIT_EXCEEDED (per-minute limit of the plan, or of the client IP without a key) or QUOTA_EXCEEDED (monthly quota, calendar month UTC). ' +
    'Headers: `Retry-After` (seconds), `RateLimit-Policy`, `RateLimit`, `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (seconds); body `retryAfter`.',
  502: 'UPSTREAM_ERROR: the resource is not mirrored yet and the upstream failed (error, 403 block, malformed answer, open circuit).',
  504: 'UPSTREAM_TIMEOUT: the resource is not mirrored yet and the upstream did not answer in time.',
};

/** Response schemas for the error statuses a route can answer, each described. */
export function problemResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Ref('Problem', { description: PROBLEM_DESCRIPTIONS[s] ?? 'Problem document.' });
  return out;
}

export const SHARED_SCHEMAS = [Address, GeoPoint, SingleMeta, Links, ListMeta, ProblemSchema];
