import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UpstreamError } from '../../upstream/errors.js';
import { Problem, invalidParams, notFound, type ParamError } from '../problem.js';

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

/** Sends `problem` as `application/problem+json`. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: Problem): FastifyReply {
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) reply.header(name, value);
  return reply.code(problem.status).type('application/problem+json').send(problem.body(request.url.split('?')[0]));
}

/**
 * Every error becomes a problem document: validation errors 400 `INVALID_PARAMS` naming each bad
 * parameter, unknown routes 404, upstream failures 502 (504 for a timeout), anything else 500.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof Problem) return sendProblem(request, reply, error);
    if (error.validation) return sendProblem(request, reply, invalidParams(paramErrors(error.validation as AjvError[], error.validationContext ?? 'query')));
    if (error instanceof UpstreamError) {
      request.log.warn({ failure: error.failure, err: error.message }, 'upstream failure');
      const timeout = error.failure === 'timeout';
      return sendProblem(
        request,
        reply,
        new Problem(timeout ? 504 : 502, timeout ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR', `The upstream listings site could not answer (${error.failure}).`),
      );
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendProblem(request, reply, invalidParams([{ name: 'request', in: 'request', message: error.message }]));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, new Problem(500, 'INTERNAL_ERROR', 'An unexpected error occurred.'));
  });
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, notFound(`No route ${request.method} ${request.url.split('?')[0]}.`)));
}
