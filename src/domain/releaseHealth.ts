/**
 * Release health rules (docs/decisions.md, "Release health"): who counts as a user, what
 * crash-free and adoption mean, and when a crash group wears a "new" or "regressed" badge.
 * Pure: the stores count, these decide.
 */

import { DAY_MS } from './exportParams.ts';

export const HOUR_MS = 3_600_000;

/**
 * A session's user for "users" and "crash-free users": its user id, else its device (an app
 * without signed-in users counts installations, as Crashlytics does). The prefix keeps a user
 * id that happens to equal a fingerprint apart from it.
 */
export function userKey(userId: string | null | undefined, deviceFingerprint: string): string {
  return userId ? `user:${userId}` : `device:${deviceFingerprint}`;
}

/** A percentage with three decimals (99.952), the precision release health is read at. */
export function percent(part: number, whole: number): number | null {
  if (whole <= 0) return null;
  return Math.round((part / whole) * 100_000) / 1000;
}

/**
 * Crash-free share: the sessions (or users) with no fatal crash, of all of them. A handled
 * error does not count against it, as the sessions chart already decides. Null without sessions.
 */
export function crashFree(total: number, crashed: number): number | null {
  if (total <= 0) return null;
  return percent(Math.max(total - Math.min(crashed, total), 0), total);
}

/** The release a row of figures belongs to; an unknown version or platform is ''. */
export interface ReleaseId {
  appVersion: string;
  platform: string;
}

export const releaseKey = (r: ReleaseId) => `${r.platform}\u0000${r.appVersion}`;

/**
 * The adoption windows end where the range ends, or now if the range reaches into the future:
 * "adoption over the last 24 h / 7 d" as of the end of what is being read.
 */
export function adoptionEnd(toMsExclusive: number, now: number): number {
  return Math.min(toMsExclusive, Math.ceil(now / HOUR_MS) * HOUR_MS);
}

/** How long a group stays "new" after its first occurrence, and "regressed" after reopening (Sentry's 7 days). */
export const BADGE_MS = 7 * DAY_MS;

export type GroupBadge = 'new' | 'regressed' | null;

/**
 * "regressed": an occurrence from a new version reopened the resolved group within the last
 * 7 days and nobody has moved it since; "new": first seen within the last 7 days; else none.
 */
export function groupBadge(g: {
  status: string;
  firstSeenAt: number;
  /** when it was last reopened by a regression */
  regressedAt: number | null;
  /** when a person last changed its status */
  movedByHandAt: number | null;
}, now: number): GroupBadge {
  if (g.status === 'open' && g.regressedAt !== null && now - g.regressedAt < BADGE_MS
    && (g.movedByHandAt === null || g.movedByHandAt < g.regressedAt)) return 'regressed';
  if (now - g.firstSeenAt < BADGE_MS) return 'new';
  return null;
}

/** Ranges of a group's activity chart: the span and the width of one bucket. */
export const ACTIVITY_RANGES = {
  '24h': { spanMs: DAY_MS, bucketMs: HOUR_MS },
  '14d': { spanMs: 14 * DAY_MS, bucketMs: DAY_MS },
  '90d': { spanMs: 90 * DAY_MS, bucketMs: DAY_MS },
} as const;
export type ActivityRange = keyof typeof ACTIVITY_RANGES;

/** The bucket starts of a chart that ends with the bucket holding `now`, oldest first. */
export function buckets(range: ActivityRange, now: number): number[] {
  const { spanMs, bucketMs } = ACTIVITY_RANGES[range];
  const last = Math.floor(now / bucketMs) * bucketMs;
  const n = Math.round(spanMs / bucketMs);
  return Array.from({ length: n }, (_, i) => last - (n - 1 - i) * bucketMs);
}
