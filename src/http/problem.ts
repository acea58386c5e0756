/** Stable error codes of the API (DESIGN.md "Errors"). */
export type ProblemCode =
  | 'INVALID_PARAMS'
  | 'MISSING_API_KEY'
  | 'INVALID_API_KEY'
  | 'EXPIRED_API_KEY'
  | 'NOT_FOUND'
  | 'RATE_LIMIT_EXCEEDED'
  | 'QUOTA_EXCEEDED'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'INTERNAL_ERROR';

/** One invalid parameter: its name, where it was (`query`, `path`, `header`), and what is wrong. */
export interface ParamError {
  name: string;
  in: string;
  message: string;
}

const TITLES: Record<ProblemCode, string> = {
  INVALID_PARAMS: 'Invalid parameters',
  MISSING_API_KEY: 'API key required',
  INVALID_API_KEY: 'Invalid API key',
  EXPIRED_API_KEY: 'Expired API key',
  NOT_FOUND: 'Not found',
  RATE_LIMIT_EXCEEDED: 'Rate limit exceeded',
  QUOTA_EXCEEDED: 'Monthly quota exceeded',
  UPSTREAM_ERROR: 'Upstream error',
  UPSTREAM_TIMEOUT: 'Upstream timeout',
  INTERNAL_ERROR: 'Internal error',
};

/**
 * An error the API answers as RFC 9457 `application/problem+json`:
 * `{type, title, status, detail, instance, code}` plus `errors` (invalid parameters) or `retryAfter`.
 */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extra: { errors?: ParamError[]; retryAfter?: number; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }

  /** The problem document for a request to `instance` (the request path). */
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
    };
  }
}

export const invalidParams = (errors: ParamError[]): Problem =>
  new Problem(400, 'INVALID_PARAMS', errors.map((e) => `${e.name}: ${e.message}`).join('; '), { errors });
export const notFound = (detail: string): Problem => new Problem(404, 'NOT_FOUND', detail);
