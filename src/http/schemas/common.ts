import { Type, type TSchema } from 'typebox';
import { Address, GeoPoint, Nullable } from '../../wire/common.js';
import { PROBLEM_CODES } from '../problem.js';

const metaBase = {
  dataAge: Type.String({ format: 'date-time', description: 'When the data was last confirmed by the upstream (UTC).' }),
  source: Type.Enum(['cached', 'stale', 'refreshing'], {
    description:
      '`cached`: within the freshness threshold. `stale`: older than the threshold and no refresh running; `refreshTriggered` says whether this request started one (none starts while the upstream circuit is open). ' +
      '`refreshing`: older than the threshold and a refresh is already running. Stored data is always answered.',
  }),
  freshnessThreshold: Type.Integer({ description: 'Freshness threshold in seconds.' }),
  refreshTriggered: Type.Boolean({
    description: 'Whether this request caused a refresh (background, or a synchronous fetch of data not yet stored).',
  }),
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
  { description: 'Paths (beginning with /v1/) echoing the filters with `page` and the `perPage` in effect.' },
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
    type: Type.String({ description: 'URI naming the kind of problem; one per code.' }),
    title: Type.String(),
    status: Type.Integer({ description: 'The HTTP status, repeated.' }),
    detail: Type.String({ description: 'What went wrong with this request, for a person.' }),
    instance: Type.String({ description: 'The request path (never its query).' }),
    code: Type.Enum(Object.keys(PROBLEM_CODES), { description: 'Stable machine-readable code.' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ name: Type.String(), in: Type.String(), message: Type.String() }), {
        description: 'INVALID_PARAMS: each bad or unknown parameter.',
      }),
    ),
    retryAfter: Type.Optional(Type.Integer({ description: 'Seconds to wait before retrying (429, 503).' })),
    subscriptionStatus: Type.Optional(
      Type.String({ description: "SUBSCRIPTION_INACTIVE: the key's subscription status (`canceled`, `unpaid`, `paused`...)." }),
    ),
    account: Type.Optional(Type.String({ description: 'SUBSCRIPTION_INACTIVE: the page that shows the key and its subscription.' })),
    pricing: Type.Optional(Type.String({ description: 'SUBSCRIPTION_INACTIVE: the page that sells a new subscription.' })),
    traceId: Type.Optional(Type.String({ description: "With tracing on: the request's trace (OpenTelemetry), for the operator." })),
  },
  { $id: 'Problem', description: 'RFC 9457 problem document, sent as application/problem+json.' },
);

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'INVALID_PARAMS: `errors[]` names each bad or unknown parameter (numbers in plain decimal digits, instants in RFC 3339, no control characters). BAD_REQUEST: a malformed request. Nothing is changed.',
  401: 'MISSING_API_KEY, INVALID_API_KEY (empty, malformed, unknown or revoked) or EXPIRED_API_KEY; with `WWW-Authenticate: Bearer`.',
  403: "PLAN_REQUIRED: the key's plan does not include this endpoint (see the endpoint's description); ORIGIN_NOT_ALLOWED: a publishable key from an origin it does not list; OPERATION_NOT_ALLOWED: a key limited to other operations; SUBSCRIPTION_INACTIVE: the key's subscription is canceled, unpaid or paused (`subscriptionStatus`; see `/account`).",
  404: 'NOT_FOUND: neither the mirror nor the upstream has it.',
  410: 'CURSOR_EXPIRED: the events after this cursor are past the retention and gone; start again from a newer cursor (`since=0` reads what is kept).',
  422: "OFF_LAND: the point given lies on none of the city's land (water, or outside New York City). ADDRESS_NOT_FOUND: no tax lot in the mirror carries the address given. ADDRESS_AMBIGUOUS: tax lots in more than one place carry it; add the borough or ZIP code. Nothing is estimated.",
  414: 'URI_TOO_LONG: a path parameter longer than 500 characters.',
  429:
    'RATE_LIMIT_EXCEEDED (per-minute limit of the plan, or of the client IP without a key) or QUOTA_EXCEEDED (monthly quota, calendar month UTC). ' +
    'Headers: `Retry-After` (seconds), `RateLimit-Policy`, `RateLimit`, `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (seconds); body `retryAfter`.',
  500: 'INTERNAL_ERROR: a fault of the service; it is logged with the request id (X-Request-Id).',
  502: 'UPSTREAM_ERROR: the resource is not mirrored yet and the upstream failed (error, 403 block, malformed answer, open circuit).',
  503: 'UPSTREAM_BUSY: the resource is not mirrored yet and too many lookups already wait for the upstream; retry after `Retry-After` seconds.',
  504: 'UPSTREAM_TIMEOUT: the resource is not mirrored yet and the upstream did not answer within REQUEST_DEADLINE_SECONDS; the lookup goes on, so asked again after `Retry-After` seconds it is likely answered.',
};

/** The query string of an operation that takes no parameters: any parameter is a 400 (a misspelling never passes). */
/** A listing id in a path (`/v1/property/{id}` and its comparables): the upstream site's id, as the routes take it. */
export const LISTING_ID = Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$', description: "The upstream site's listing id." });

export const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * Responses for the error statuses a route can answer, each described and typed as
 * `application/problem+json`; 500 INTERNAL_ERROR is added to every route.
 */
export function problemResponses(
  ...statuses: number[]
): Record<number, { description: string; content: Record<string, { schema: TSchema }> }> {
  const out: Record<number, { description: string; content: Record<string, { schema: TSchema }> }> = {};
  for (const s of [...new Set([...statuses, 500])]) {
    out[s] = {
      description: PROBLEM_DESCRIPTIONS[s] ?? 'Problem document.',
      content: { 'application/problem+json': { schema: Type.Ref('Problem') } },
    };
  }
  return out;
}

/** The meta of a comparables answer (listings or recorded sales): freshness and the radius searched. */
export const ComparablesMeta = Type.Object({
  dataAge: Type.String({ format: 'date-time' }),
  source: Type.Enum(['cached', 'stale', 'refreshing']),
  freshnessThreshold: Type.Integer(),
  refreshTriggered: Type.Boolean(),
  radius: Type.Union([Type.Integer(), Type.Null()], {
    description: "The radius searched, metres; null when the listing's position is unknown.",
  }),
});

/** The meta of a map's clusters: freshness, the matches counted (the sum of the cells' counts), the zoom and the cells' size. */
export const ClustersMeta = Type.Object({
  ...metaBase,
  total: Type.Integer({
    minimum: 0,
    description:
      "Matching listings with a position in the box: the sum of the cells' counts, and the search's total with the same filters and box.",
  }),
  zoom: Type.Integer({ minimum: 0, maximum: 22 }),
  cellDegrees: Type.Object(
    { longitude: Type.Number(), latitude: Type.Number() },
    {
      description:
        "A cell's width and height in degrees: 32 pixels on a Web Mercator map at the zoom, square at the box's latitude (rounded to a whole degree).",
    },
  ),
});

/** Schemas registered by id: the OpenAPI document's components. */
export const SHARED_SCHEMAS = [Address, GeoPoint, SingleMeta, ListMeta, ProblemSchema];
