/**
 * Failures the rules and the services name, with no notion of HTTP: the edge
 * (src/http/errors.ts) alone decides their status codes and bodies.
 */
export class DomainError extends Error {}

/**
 * A field of a request breaks a rule; `path` is a JSON pointer into the request body. A problem
 * the JSON schema found also names ajv's `keyword` and `params`, for a client to word it.
 */
export interface FieldProblem {
  path: string;
  message: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

/** A thing the caller named does not exist for them (another project's is just as absent). */
export class NotFoundError extends DomainError {}

/** The project named does not exist, or belongs to a team the caller is not in. */
export class ProjectNotFoundError extends NotFoundError {
  constructor() {
    super('Project not found');
  }
}

/** At most this many field problems are reported for one request. */
export const MAX_DETAILS = 100;

/** The request is well formed but breaks rules on its fields. */
export class ValidationError extends DomainError {
  constructor(readonly details: FieldProblem[]) {
    super('Validation failed');
  }
}

/** The caller may see the thing but not do this to it (a member managing a team, a suspended team's new key). */
export class ForbiddenError extends DomainError {}

/** The change collides with what exists (a member already in the team). */
export class ConflictError extends DomainError {}

/** A parameter outside a body (query string) cannot be read; `parameter` names it when one is to blame. */
export class InvalidParameterError extends DomainError {
  constructor(
    message: string,
    readonly parameter?: string,
  ) {
    super(message);
  }
}

/** Ingestion's write queue is full: the caller should retry shortly. */
export class QueueFullError extends DomainError {
  constructor() {
    super('Ingestion queue is full');
  }
}

/** Too many of something at once (e.g. streamed exports of a project): retry after a while. */
export class TooBusyError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}
