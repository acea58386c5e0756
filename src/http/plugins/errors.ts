import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../../store/database.js';
import { UpstreamError } from '../../upstream/errors.js';
import { BillingProviderError } from '../../billing/provider.js';
import { currentTraceId } from '../../telemetry/spans.js';
import { Problem, invalidParams, notFound, type ParamError, type ProblemCode } from '../problem.js';
import type { RouteIndex } from '../route-index.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Ajv validation errors -> one entry per bad parameter (first message wins). */
export function paramErrors(validation: AjvError[], where: string): ParamError[] {
  const location = where === 'querystring' ? 'query' : where === 'params' ? 'path' : where;
  const byName = new Map<string, ParamError>();
  for (const e of validation) {
    let name = e.instancePath.replace(/^\//, '').split('/')[0];
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      name = String(e.params.additionalProperty);
      message = 'is not a known parameter';
    } else if (e.keyword === 'required') {
      name = String(e.params.missingProperty);
      message = 'is required';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params.allowedValues as string[]).join(', ')}`;
    }
    if (!byName.has(name)) byName.set(name, { name, in: location, message });
  }
  return [...byName.values()];
}

const MAX_ECHOED_PATH = 600;

/**
 * The path of a request target, without its query: `/v1/x` for `/v1/x?y`, and for an absolute-form
 * target (`http://host/v1/x`) the path inside it. Never echoes the query or the host.
 */
export function requestPath(url: string): string {
  let path = '/';
  if (url.startsWith('/')) path = url.split('?')[0];
  else {
    try {
      path = new URL(url).pathname;
    } catch {
      // not a URL at all: answer for the root
    }
  }
  // An over-long target (the 414 case) is not echoed whole.
  return path.length > MAX_ECHOED_PATH ? `${path.slice(0, MAX_ECHOED_PATH)}...` : path;
}

/** Sends `problem` as `application/problem+json`, with the request id. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem): FastifyReply {
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) reply.header(name, value);
  reply.header('X-Request-Id', request.id);
  // With tracing on, the trace of the request: an operator finds it from what a client reports.
  const traceId = currentTraceId();
  const body = problem.body(requestPath(request.url));
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send(traceId ? { ...body, traceId } : body);
}

/** Fastify and Node errors that carry an HTTP status of their own -> the problem to answer. */
const BY_STATUS: Record<number, [ProblemCode, string]> = {
  405: ['METHOD_NOT_ALLOWED', 'This method is not allowed here.'],
  413: ['PAYLOAD_TOO_LARGE', 'The request body is too large; the API takes no request bodies.'],
  414: ['URI_TOO_LONG', 'The request target is too long.'],
  431: ['HEADERS_TOO_LARGE', 'The request headers are too large.'],
};

function statusProblem(status: number): Problem {
  const [code, detail] = BY_STATUS[status] ?? ['BAD_REQUEST', 'The request could not be understood.'];
  return new Problem(code, detail);
}

/**
 * Fastify's `frameworkErrors` option: errors raised while routing, before any route runs (a malformed
 * percent-escape in the path, a path parameter over the router's length limit). Answered as problems
 * without echoing the request target.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? statusProblem(414)
      : error.code === 'FST_ERR_BAD_URL'
        ? new Problem('BAD_REQUEST', 'The request path has a malformed percent-escape.')
        : statusProblem(error.statusCode ?? 400);
  sendProblem(request, reply, problem);
}

/**
 * Fastify's `clientErrorHandler` option: a request head Node could not parse (control characters in a
 * header, a head over the size limit) gets a problem document on the raw socket, then the connection
 * is closed. No request exists yet, so the instance is `/`.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const problem = status === 408 ? new Problem('BAD_REQUEST', 'The request head did not arrive in time.') : statusProblem(status);
  socket.end(problem.rawResponse('/'));
}

/** The problem of a subscription provider's failure (a documented upstream failure: 502, retry shortly); null for any other error. */
export function providerProblem(error: unknown): Problem | null {
  return error instanceof BillingProviderError
    ? new Problem('PAYMENT_PROVIDER_ERROR', 'The payment provider could not be reached or failed; try again shortly.', {
        headers: { 'Retry-After': '5' },
        retryAfter: 5,
      })
    : null;
}

/**
 * Every error becomes a problem document: validation errors 400 `INVALID_PARAMS` naming each bad
 * parameter; upstream failures 502 (504 for a timeout, 503 when its queue is full), the payment provider's 502; Fastify's own
 * client errors keep their status (413, 414, 431; others 400 `BAD_REQUEST`) with a fixed text; anything
 * else 500. A known path asked with another method is 405 with `Allow`; an unknown path 404 pointing to
 * the documentation.
 */
export function registerErrorHandling(app: FastifyInstance, routes: RouteIndex): void {
  /** A request no route matched: 405 with `Allow` when its path answers other methods, else 404. */
  const unrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const path = requestPath(request.url);
    const allowed = routes.methodsFor(path);
    if (allowed.length) {
      return sendProblem(
        request,
        reply,
        new Problem('METHOD_NOT_ALLOWED', `${path} answers ${allowed.join(', ')} only.`, { headers: { Allow: allowed.join(', ') } }),
      );
    }
    return sendProblem(
      request,
      reply,
      notFound(`No route ${request.method} ${path}. The interface is described at /docs and /v1/openapi.json.`),
    );
  };
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof Problem) return sendProblem(request, reply, error);
    // A body no route would read (empty or malformed JSON, a type nothing parses) is not the request's fault: its method or path is.
    if (request.is404 && (error.statusCode === 400 || error.statusCode === 415)) return unrouted(request, reply);
    if (error.validation)
      return sendProblem(request, reply, invalidParams(paramErrors(error.validation as AjvError[], error.validationContext ?? 'query')));
    const provider = providerProblem(error);
    if (provider) {
      request.log.warn({ err: error.message }, 'payment provider failure answered');
      return sendProblem(request, reply, provider);
    }
    if (error instanceof UpstreamError) {
      request.log.info({ failure: error.failure, err: error.message }, 'upstream failure answered');
      const [code, detail]: [ProblemCode, string] =
        error.failure === 'timeout'
          ? ['UPSTREAM_TIMEOUT', 'The upstream listings site did not answer in time.']
          : error.failure === 'busy'
            ? ['UPSTREAM_BUSY', 'Too many lookups are waiting for the upstream listings site; retry shortly.']
            : ['UPSTREAM_ERROR', `The upstream listings site could not answer (${error.failure}).`];
      // A lookup past its deadline goes on: asked again shortly, it is likely done.
      const retry = error.failure === 'busy' || error.failure === 'timeout';
      return sendProblem(request, reply, new Problem(code, detail, retry ? { headers: { 'Retry-After': '5' }, retryAfter: 5 } : {}));
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
      return sendProblem(request, reply, statusProblem(error.statusCode));
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error.message }, 'database unavailable: answered 503');
      return sendProblem(
        request,
        reply,
        new Problem('DATABASE_UNAVAILABLE', 'The database cannot be reached now; retry shortly.', {
          headers: { 'Retry-After': '5' },
          retryAfter: 5,
        }),
      );
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, new Problem('INTERNAL_ERROR', 'An unexpected error occurred.'));
  });
  app.setNotFoundHandler(unrouted);
}
