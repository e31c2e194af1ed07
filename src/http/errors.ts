import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { ConflictError, ForbiddenError, InvalidParameterError, MAX_DETAILS, NotFoundError, QueueFullError, TooBusyError, ValidationError } from '../domain/errors.ts';

/** An error that becomes `{error, details?}` with its status code. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: { path: string; message: string }[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * docs/decisions.md (Ingestion): a missing required field is a 400, every other schema failure a 422 whose
 * details point into the body with a JSON pointer. Query-string failures are 400.
 */
export function validationToHttpError(errors: AjvError[], context: string | undefined): HttpError {
  const missing = errors.find((e) => e.keyword === 'required');
  if (missing) {
    return new HttpError(400, `Missing required field ${missing.instancePath}/${String(missing.params.missingProperty)}`);
  }
  if (context !== 'body') {
    const e = errors[0];
    const name = e?.instancePath.replace(/^\//, '') || context || 'request';
    return new HttpError(400, `Invalid ${context ?? 'request'} parameter ${name}: ${e?.message ?? 'invalid'}`);
  }
  const details = errors
    .filter((e) => e.keyword !== 'if' && e.keyword !== 'allOf')
    .slice(0, MAX_DETAILS)
    .map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'is invalid' }));
  return new HttpError(422, 'Validation failed', details);
}

/**
 * Fastify's router answers a malformed URL or an over-long path parameter itself, with a body
 * of its own shape; this option (passed to Fastify()) gives them the contract's `{error}`.
 */
export function frameworkErrors(err: FastifyError, _req: unknown, reply: FastifyReply): void {
  const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : err.code === 'FST_ERR_BAD_URL' ? 400 : 500;
  const message = status === 414 ? 'URL path parameter is too long' : status === 400 ? 'Malformed URL' : 'Internal server error';
  reply.code(status).send({ error: message });
}

/**
 * Our wording for a 4xx another library raised: its own message may name internals (a zlib
 * error, a parser's position) and is not part of the contract.
 */
function libraryClientError(err: FastifyError): string {
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'Unsupported Content-Type: send application/json';
  if (err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return 'Request body length does not match Content-Length';
  if (typeof err.code === 'string' && err.code.startsWith('Z_')) return 'Request body could not be inflated: bad gzip or deflate data';
  if (err.statusCode === 408) return 'Request timed out';
  if (err.statusCode === 415) return 'Unsupported media type';
  return 'Bad request';
}

/**
 * What of an error may be logged: its class, message, code and stack. A store's error object
 * can carry the query and its bound parameters (user data, emails, tokens), which must not.
 */
export function loggableError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const e = err as Error & { code?: unknown };
  return { type: e.constructor.name, message: e.message, code: typeof e.code === 'string' ? e.code : undefined, stack: e.stack };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validation?: AjvError[]; validationContext?: string }, req, reply) => {
    let e: HttpError;
    if (err instanceof HttpError) e = err;
    else if (err.validation) e = validationToHttpError(err.validation, err.validationContext);
    else if (err instanceof QueueFullError) e = new HttpError(503, 'Service is busy, retry shortly', undefined, { 'retry-after': '1' });
    else if (err instanceof NotFoundError) e = new HttpError(404, err.message);
    else if (err instanceof ForbiddenError) e = new HttpError(403, err.message);
    else if (err instanceof ConflictError) e = new HttpError(409, err.message);
    else if (err instanceof TooBusyError) e = new HttpError(429, err.message, undefined, { 'retry-after': String(err.retryAfterSeconds) });
    else if (err instanceof ValidationError) e = new HttpError(422, err.message, err.details);
    else if (err instanceof InvalidParameterError) e = new HttpError(400, err.message);
    // Only the body parser's own errors mean the client sent bad JSON; a SyntaxError thrown by
    // our code (a JSON.parse of stored data) is a fault of ours and falls through to a 500.
    else if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      e = new HttpError(400, 'Request body is not valid JSON');
    } else if (err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') e = new HttpError(413, 'Request body is too large');
    else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 && !(err instanceof SyntaxError)) {
      e = new HttpError(err.statusCode, libraryClientError(err));
    } else {
      req.log.error({ err: loggableError(err) }, 'request failed');
      e = new HttpError(500, 'Internal server error');
    }
    if (e.headers) reply.headers(e.headers);
    reply.code(e.statusCode).send(e.details ? { error: e.message, details: e.details } : { error: e.message });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: `Route ${req.method} ${req.url.split('?')[0]} not found` });
  });
}
