export const SESSION_STATUSES = ['active', 'completed', 'crashed'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Status after a session-end call. A crashed session is never downgraded. */
export function statusAfterEnd(current: SessionStatus): SessionStatus {
  return current === 'active' ? 'completed' : current;
}

/** Status after a crash report; only a fatal crash changes it. */
export function statusAfterCrash(current: SessionStatus, isFatal: boolean): SessionStatus {
  return isFatal ? 'crashed' : current;
}

export type EndDecision = 'apply' | 'ignore' | 'before-start';

/** The first accepted endedAt wins; an end before the start is a client error. */
export function decideEnd(session: { startedAt: number; endedAt: number | null }, endedAt: number): EndDecision {
  if (session.endedAt !== null) return 'ignore';
  if (endedAt < session.startedAt) return 'before-start';
  return 'apply';
}

/** A network request counts as an error at HTTP status >= 400 or with any error text. */
export function isNetworkError(r: { statusCode?: number | null; error?: string | null }): boolean {
  return (r.statusCode != null && r.statusCode >= 400) || (r.error != null);
}
