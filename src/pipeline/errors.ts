import { QueueFullError } from '../domain/errors.ts';
import { RowsRefusedError, StoreDownError } from '../stores/clickhouse/batcher.ts';

/**
 * The one error policy of the pipelines (the crash loader, the outbox's jobs): every error is
 * either **retryable** (the world is at fault: a store down or slow, a queue full; the same work
 * succeeds later, so the batch or job is tried again with backoff and nothing is set aside) or
 * **permanent** (the work itself is at fault: it can never succeed, so it is set aside with a
 * reason and the rest goes on). The vocabularies of the layers below map onto those two here
 * and nowhere else: `StoreDownError` / `RowsRefusedError` (ClickHouse group commit),
 * `QueueFullError` (ingestion budgets), `PermanentJobError` / `DeferJobError` (the outbox), the
 * Postgres drivers' connection and timeout errors, and a program error (TypeError…).
 */
export type ErrorClass =
  | { kind: 'retryable'; reason: string /** put back after this long without spending an attempt */; delayMs?: number }
  | { kind: 'permanent'; reason: string };

/** A failure no retry can fix, with a short reason (a metric label: keep the set small). */
export class PermanentError extends Error {
  constructor(
    readonly reason: string,
    message = reason,
  ) {
    super(message);
  }
}

/** A failure of the surroundings that a later try fixes. */
export class RetryableError extends Error {
  constructor(
    readonly reason: string,
    message = reason,
  ) {
    super(message);
  }
}

/** A job failure that no retry can fix (unknown kind, deleted group): failed at once. */
export class PermanentJobError extends Error {}

/** The job cannot run yet (its project's alert slot is taken): put back without spending an attempt. */
export class DeferJobError extends Error {
  constructor(readonly delayMs: number) {
    super(`deferred for ${delayMs} ms`);
  }
}

// Socket-level failures (node, undici, the ClickHouse client): the store or the path to it.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ESOCKETTIMEDOUT',
  'ENETDOWN',
  'EHOSTDOWN',
]);

/**
 * SQLSTATE classes and codes that say "try again": 08 connection exception, 53 insufficient
 * resources (too many connections, disk full, out of memory), 57P01-57P05 shutdown / cannot
 * connect now / idle timeout, 40001 serialization failure, 40P01 deadlock, 55P03 lock not
 * available, 57014 query cancelled (statement_timeout).
 */
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01', '55P03', '57014', '57P01', '57P02', '57P03', '57P04', '57P05']);
const retryableSqlState = (code: string) =>
  code.startsWith('08') || code.startsWith('53') || RETRYABLE_SQLSTATES.has(code);

// pg's own words when the pool or socket gives up (it sets no code on these).
const PG_GONE = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];

/** Errors of the program itself: the record that met one would meet it again. */
const PROGRAM_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, URIError, EvalError];

const codeOf = (err: Error): string | undefined => {
  const c = (err as Error & { code?: unknown }).code;
  return typeof c === 'string' ? c : undefined;
};

/** Retryable or permanent, and why (see ErrorClass). */
export function classify(err: unknown): ErrorClass {
  if (err instanceof PermanentError) return { kind: 'permanent', reason: err.reason };
  if (err instanceof RetryableError) return { kind: 'retryable', reason: err.reason };
  if (err instanceof PermanentJobError) return { kind: 'permanent', reason: 'job' };
  if (err instanceof DeferJobError) return { kind: 'retryable', reason: 'deferred', delayMs: err.delayMs };
  if (err instanceof StoreDownError) return { kind: 'retryable', reason: 'clickhouse-down' };
  if (err instanceof QueueFullError) return { kind: 'retryable', reason: 'queue-full' };
  // The store answered and refused these rows alone: writing them again is refused again.
  if (err instanceof RowsRefusedError) return { kind: 'permanent', reason: 'rows-refused' };
  if (!(err instanceof Error)) return { kind: 'retryable', reason: 'unclassified' };
  // fetch() reports a socket failure as `TypeError: fetch failed`, the socket's code on its cause.
  const cause = (err as Error & { cause?: unknown }).cause;
  const code = codeOf(err) ?? (cause instanceof Error ? codeOf(cause) : undefined);
  const socket = code !== undefined && (NETWORK_CODES.has(code) || code.startsWith('UND_ERR_'));
  if (socket || err.message === 'fetch failed') return { kind: 'retryable', reason: 'store-unreachable' };
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    // A SQLSTATE: the database answered. Retryable classes above; the rest (a constraint, a
    // value the column refuses) is about this record's data.
    return retryableSqlState(code)
      ? { kind: 'retryable', reason: 'postgres-unavailable' }
      : { kind: 'permanent', reason: 'postgres-refused' };
  }
  if (PG_GONE.some((m) => err.message.includes(m))) return { kind: 'retryable', reason: 'postgres-unavailable' };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return { kind: 'retryable', reason: 'timeout' };
  if (PROGRAM_ERRORS.some((E) => err.constructor === E)) return { kind: 'permanent', reason: 'program-error' };
  // Unnamed: more likely a store's failure mode this table does not know yet than the record;
  // a retry costs time, not data. The crash pipeline bounds how often one record may repeat it.
  return { kind: 'retryable', reason: 'unclassified' };
}
