import { STATUS_CODES } from 'node:http';

/** Stable error codes of the API (DESIGN.md "Errors"), each with the one HTTP status it is sent with. */
export const PROBLEM_CODES = {
  BAD_REQUEST: 400,
  INVALID_PARAMS: 400,
  WEBHOOK_SIGNATURE_INVALID: 400,
  MISSING_API_KEY: 401,
  INVALID_API_KEY: 401,
  EXPIRED_API_KEY: 401,
  PLAN_REQUIRED: 403,
  ORIGIN_NOT_ALLOWED: 403,
  OPERATION_NOT_ALLOWED: 403,
  SUBSCRIPTION_INACTIVE: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  KEY_REPLACED: 409,
  CHECKOUT_NOT_PAID: 409,
  PLAN_NOT_SOLD: 409,
  KEY_ALREADY_SHOWN: 410,
  CURSOR_EXPIRED: 410,
  OFF_LAND: 422,
  ADDRESS_NOT_FOUND: 422,
  ADDRESS_AMBIGUOUS: 422,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  PAYMENT_PROVIDER_ERROR: 502,
  UNAVAILABLE: 503,
  DATABASE_UNAVAILABLE: 503,
  UPSTREAM_BUSY: 503,
  UPSTREAM_TIMEOUT: 504,
} as const;
export type ProblemCode = keyof typeof PROBLEM_CODES;

/** One invalid parameter: its name, where it was (`query`, `path`, `header`), and what is wrong. */
export interface ParamError {
  name: string;
  in: string;
  message: string;
}

const TITLES: Record<ProblemCode, string> = {
  BAD_REQUEST: 'Malformed request',
  INVALID_PARAMS: 'Invalid parameters',
  WEBHOOK_SIGNATURE_INVALID: 'Event not verified',
  MISSING_API_KEY: 'API key required',
  INVALID_API_KEY: 'Invalid API key',
  EXPIRED_API_KEY: 'Expired API key',
  PLAN_REQUIRED: 'Plan does not include this',
  ORIGIN_NOT_ALLOWED: 'Key not valid from this origin',
  OPERATION_NOT_ALLOWED: 'Key not valid for this operation',
  SUBSCRIPTION_INACTIVE: 'Subscription inactive',
  NOT_FOUND: 'Not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  KEY_REPLACED: 'Key already replaced',
  CHECKOUT_NOT_PAID: 'Checkout not paid',
  PLAN_NOT_SOLD: 'Plan not sold',
  KEY_ALREADY_SHOWN: 'Key shown already',
  CURSOR_EXPIRED: 'Cursor too old',
  OFF_LAND: "Point off the city's land",
  ADDRESS_NOT_FOUND: 'Address not found',
  ADDRESS_AMBIGUOUS: 'Address in more than one place',
  PAYLOAD_TOO_LARGE: 'Request body too large',
  URI_TOO_LONG: 'Request target too long',
  RATE_LIMIT_EXCEEDED: 'Rate limit exceeded',
  QUOTA_EXCEEDED: 'Monthly quota exceeded',
  HEADERS_TOO_LARGE: 'Request headers too large',
  INTERNAL_ERROR: 'Internal error',
  UPSTREAM_ERROR: 'Upstream error',
  PAYMENT_PROVIDER_ERROR: 'Payment provider error',
  UNAVAILABLE: 'Service unavailable',
  DATABASE_UNAVAILABLE: 'Database unavailable',
  UPSTREAM_BUSY: 'Upstream queue full',
  UPSTREAM_TIMEOUT: 'Upstream timeout',
};

/**
 * An error the API answers as RFC 9457 `application/problem+json`:
 * `{type, title, status, detail, instance, code}` plus `errors` (invalid parameters) or `retryAfter`.
 * The status follows from the code ({@link PROBLEM_CODES}).
 */
export class Problem extends Error {
  readonly status: number;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: {
      errors?: ParamError[];
      retryAfter?: number;
      headers?: Record<string, string>;
      /** Extension members of the document (RFC 9457, section 3.2), e.g. where to go next. */
      members?: Record<string, string>;
    } = {},
  ) {
    super(detail);
    this.status = PROBLEM_CODES[code];
  }

  /** The problem document for a request to `instance` (the request path, never its query). */
  body(instance: string): Record<string, unknown> {
    return {
      type: `https://nyc-listings.dev/problems/${this.code.toLowerCase().replace(/_/g, '-')}`,
      title: TITLES[this.code],
      status: this.status,
      detail: this.detail,
      instance,
      code: this.code,
      ...(this.extra.errors ? { errors: this.extra.errors } : {}),
      ...(this.extra.retryAfter !== undefined ? { retryAfter: this.extra.retryAfter } : {}),
      ...this.extra.members,
    };
  }

  /**
   * The whole HTTP/1.1 answer as text, for the rare errors that happen before a request exists
   * (a malformed or oversized request head): the connection is closed after it.
   */
  rawResponse(instance: string): string {
    const body = JSON.stringify(this.body(instance));
    return (
      `HTTP/1.1 ${this.status} ${STATUS_CODES[this.status]}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
    );
  }
}

export const invalidParams = (errors: ParamError[]): Problem =>
  new Problem('INVALID_PARAMS', errors.map((e) => `${e.name}: ${e.message}`).join('; '), { errors });
export const notFound = (detail: string): Problem => new Problem('NOT_FOUND', detail);
