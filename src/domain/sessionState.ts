export const SESSION_STATUSES = ['active', 'completed', 'crashed'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Status after a session-end call. A crashed session is never downgraded. */
export function statusAfterEnd(current: SessionStatus): SessionStatus {
  return current === 'active' ? 'completed' : current;
}

/**
 * The status a crash report sets, or null when it leaves the session's as it is: only a fatal
 * crash changes it. The crash path's SQL takes this value as its parameter (sessions are
 * flagged against the row as it is when locked: src/repos/sessions.ts markCrashed).
 */
export function statusSetByCrash(isFatal: boolean): SessionStatus | null {
  return isFatal ? 'crashed' : null;
}

/** Status after a crash report. */
export function statusAfterCrash(current: SessionStatus, isFatal: boolean): SessionStatus {
  return statusSetByCrash(isFatal) ?? current;
}

export type EndDecision = 'apply' | 'ignore' | 'before-start';

/**
 * The first accepted endedAt wins; an end before the start is a client error. A provisional
 * end (set by a fatal crash) is not an accepted one: the first explicit end replaces it.
 */
export function decideEnd(
  session: { startedAt: number; endedAt: number | null; provisional?: boolean },
  endedAt: number,
): EndDecision {
  if (session.endedAt !== null && !session.provisional) return 'ignore';
  if (endedAt < session.startedAt) return 'before-start';
  return 'apply';
}

/** A network request counts as an error at HTTP status >= 400 or with any error text. */
export function isNetworkError(r: { statusCode?: number | null; error?: string | null }): boolean {
  return (r.statusCode != null && r.statusCode >= 400) || r.error != null;
}

/**
 * The same verdict over a stored network event's `data` (JSON as the client sent it): the
 * dashboard's timeline is sent the verdict, so the browser applies no rule of its own.
 */
export function isFailedNetworkEvent(data: Record<string, unknown>): boolean {
  return isNetworkError({
    statusCode: typeof data.statusCode === 'number' ? data.statusCode : null,
    error: data.error == null ? null : String(data.error),
  });
}
