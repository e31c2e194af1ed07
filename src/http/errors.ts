import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import {
  ConflictError,
  type FieldProblem,
  ForbiddenError,
  InvalidParameterError,
  MAX_DETAILS,
  NotFoundError,
  ProjectNotFoundError,
  QueueFullError,
  TooBusyError,
  ValidationError,
} from '../domain/errors.ts';
import { DateParamError } from '../domain/exportParams.ts';
import { CursorParamError } from '../domain/changeCursor.ts';
import { loggableError } from '../lib/log.ts';

/**
 * The machine-readable `code` of every error reply: a client branches on it, never on the
 * English `error`, which may be reworded. Most follow the status; the others name the cause.
 */
export type ErrorCode =
  | 'bad_request'
  | 'invalid_json'
  | 'missing_field'
  | 'invalid_parameter'
  | 'invalid_path_parameter'
  | 'invalid_date'
  | 'invalid_cursor'
  | 'unauthorized'
  | 'forbidden'
  | 'cross_site'
  | 'not_found'
  | 'project_not_found'
  | 'timeout'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'validation_failed'
  | 'rate_limited'
  | 'too_busy'
  | 'internal_error'
  | 'unavailable'
  | 'queue_full';

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  408: 'timeout',
  409: 'conflict',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'unavailable',
};

export const codeOfStatus = (status: number): ErrorCode =>
  CODE_OF_STATUS[status] ?? (status < 500 ? 'bad_request' : 'internal_error');

/**
 * Besides `code`, a 400 about one parameter or field names it (`field`: a parameter's name, or a
 * JSON pointer into the body) and, when the schema refused it, ajv's `keyword` and `params`.
 */
export interface ErrorExtra {
  code?: ErrorCode;
  field?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** An error that becomes `{error, code, details?}` with its status code. */
export class HttpError extends Error {
  readonly code: ErrorCode;

  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: FieldProblem[],
    readonly headers?: Record<string, string>,
    readonly extra: ErrorExtra = {},
  ) {
    super(message);
    this.code = extra.code ?? codeOfStatus(statusCode);
  }

  /** The reply's body: the contract's `{error, details?}` and the fields above. */
  body(): Record<string, unknown> {
    const { code: _, ...extra } = this.extra;
    return { error: this.message, code: this.code, ...extra, ...(this.details ? { details: this.details } : {}) };
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
    const field = `${missing.instancePath}/${String(missing.params.missingProperty)}`;
    return new HttpError(400, `Missing required field ${field}`, undefined, undefined, {
      code: 'missing_field',
      field,
    });
  }
  if (context !== 'body') {
    const e = errors[0];
    const name = e?.instancePath.replace(/^\//, '') || context || 'request';
    return new HttpError(
      400,
      `Invalid ${context ?? 'request'} parameter ${name}: ${e?.message ?? 'invalid'}`,
      undefined,
      undefined,
      {
        code: context === 'params' ? 'invalid_path_parameter' : 'invalid_parameter',
        field: name,
        keyword: e?.keyword,
        params: e?.params,
      },
    );
  }
  const details = errors
    .filter((e) => e.keyword !== 'if' && e.keyword !== 'allOf')
    .slice(0, MAX_DETAILS)
    .map((e) => ({
      path: e.instancePath || '/',
      message: e.message ?? 'is invalid',
      keyword: e.keyword,
      params: e.params,
    }));
  return new HttpError(422, 'Validation failed', details);
}

/**
 * Fastify's router answers a malformed URL or an over-long path parameter itself, with a body
 * of its own shape; this option (passed to Fastify()) gives them the contract's `{error}`.
 */
export function frameworkErrors(err: FastifyError, _req: unknown, reply: FastifyReply): void {
  const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : err.code === 'FST_ERR_BAD_URL' ? 400 : 500;
  const message =
    status === 414 ? 'URL path parameter is too long' : status === 400 ? 'Malformed URL' : 'Internal server error';
  reply.code(status).send(new HttpError(status, message).body());
}

/**
 * Our wording for a 4xx another library raised: its own message may name internals (a zlib
 * error, a parser's position) and is not part of the contract.
 */
function libraryClientError(err: FastifyError): string {
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'Unsupported Content-Type: send application/json';
  if (err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return 'Request body length does not match Content-Length';
  if (typeof err.code === 'string' && err.code.startsWith('Z_'))
    return 'Request body could not be inflated: bad gzip or deflate data';
  if (err.statusCode === 408) return 'Request timed out';
  if (err.statusCode === 415) return 'Unsupported media type';
  return 'Bad request';
}

/** The one mapping of the domain's errors (src/domain/errors.ts) to statuses and codes. */
function domainToHttpError(err: unknown): HttpError | undefined {
  if (err instanceof QueueFullError)
    return new HttpError(
      503,
      'Service is busy, retry shortly',
      undefined,
      { 'retry-after': '1' },
      { code: 'queue_full' },
    );
  if (err instanceof NotFoundError)
    return new HttpError(404, err.message, undefined, undefined, {
      code: err instanceof ProjectNotFoundError ? 'project_not_found' : 'not_found',
    });
  if (err instanceof ForbiddenError) return new HttpError(403, err.message);
  if (err instanceof ConflictError) return new HttpError(409, err.message);
  if (err instanceof TooBusyError)
    return new HttpError(
      429,
      err.message,
      undefined,
      { 'retry-after': String(err.retryAfterSeconds) },
      { code: 'too_busy' },
    );
  if (err instanceof ValidationError) return new HttpError(422, err.message, err.details);
  if (err instanceof InvalidParameterError) {
    const code =
      err instanceof DateParamError
        ? 'invalid_date'
        : err instanceof CursorParamError
          ? 'invalid_cursor'
          : 'invalid_parameter';
    return new HttpError(400, err.message, undefined, undefined, { code, field: err.parameter });
  }
  return undefined;
}

/** A 4xx the framework or a library raised, in our words; undefined for anything else (a 500). */
function libraryToHttpError(err: FastifyError): HttpError | undefined {
  // Only the body parser's own errors mean the client sent bad JSON; a SyntaxError thrown by
  // our code (a JSON.parse of stored data) is a fault of ours and falls through to a 500.
  if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new HttpError(400, 'Request body is not valid JSON', undefined, undefined, { code: 'invalid_json' });
  }
  if (err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new HttpError(413, 'Request body is too large');
  if (
    typeof err.statusCode === 'number' &&
    err.statusCode >= 400 &&
    err.statusCode < 500 &&
    !(err instanceof SyntaxError)
  ) {
    return new HttpError(err.statusCode, libraryClientError(err));
  }
  return undefined;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validation?: AjvError[]; validationContext?: string }, req, reply) => {
    let e =
      err instanceof HttpError
        ? err
        : err.validation
          ? validationToHttpError(err.validation, err.validationContext)
          : (domainToHttpError(err) ?? libraryToHttpError(err));
    if (!e) {
      req.log.error({ err: loggableError(err) }, 'request failed');
      e = new HttpError(500, 'Internal server error');
    }
    if (e.headers) reply.headers(e.headers);
    reply.code(e.statusCode).send(e.body());
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(new HttpError(404, `Route ${req.method} ${req.url.split('?')[0]} not found`).body());
  });
}
