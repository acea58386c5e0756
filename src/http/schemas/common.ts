import { Type, type TSchema } from 'typebox';

/** `schema` or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

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

/** Response schemas for the error statuses a route can answer. */
export function problemResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Ref('Problem');
  return out;
}

export const SHARED_SCHEMAS = [Address, GeoPoint, SingleMeta, Links, ListMeta, ProblemSchema];
