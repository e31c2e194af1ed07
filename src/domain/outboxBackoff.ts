export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  maxAttempts: number;
}

/**
 * Wait before the next try after `attempt` (1-based) failed: base, 2·base, 4·base, … capped at
 * maxMs. No jitter: alert jobs are few and independent, and a fixed schedule is easy to reason about.
 */
export function backoffDelayMs(attempt: number, p: Pick<BackoffPolicy, 'baseMs' | 'maxMs'>): number {
  const n = Math.max(1, Math.floor(attempt));
  // 2^(n-1) overflows to Infinity long after it passes any sane cap; Math.min handles both.
  return Math.min(p.maxMs, p.baseMs * 2 ** (n - 1));
}

export type AfterFailure = { action: 'retry'; delayMs: number } | { action: 'give-up' };

/** What to do once attempt number `attempts` has failed. */
export function afterFailure(attempts: number, p: BackoffPolicy): AfterFailure {
  return attempts >= p.maxAttempts ? { action: 'give-up' } : { action: 'retry', delayMs: backoffDelayMs(attempts, p) };
}

/**
 * A job put back because its slot is taken (a project's alert window, a webhook's rate) waits
 * until the slot frees, and at least this long: a slot that frees "now" (clock skew between
 * processes, rounding) does not spin the job through claim and defer.
 */
export const MIN_DEFER_MS = 50;

/** How long a deferred job waits when its slot frees in `waitMs`. */
export const deferDelayMs = (waitMs: number): number => Math.max(waitMs, MIN_DEFER_MS);
