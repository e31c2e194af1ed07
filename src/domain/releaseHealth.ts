/**
 * Release health rules (docs/decisions.md, "Release health"): who counts as a user, what
 * crash-free and adoption mean, and when a crash group wears a "new" or "regressed" badge.
 * Pure: the stores count, these decide.
 */

import { DAY_MS } from '../lib/time.ts';

export const HOUR_MS = 3_600_000;

/**
 * A session's user for "users" and "crash-free users": its user id, else its device (an app
 * without signed-in users counts installations, as Crashlytics does). The prefix keeps a user
 * id that happens to equal a fingerprint apart from it.
 */
export function userKey(userId: string | null | undefined, deviceFingerprint: string): string {
  return userId ? `user:${userId}` : `device:${deviceFingerprint}`;
}

/** A percentage with at most two decimals (99.95), as Sentry and Crashlytics show them. */
export function percent(part: number, whole: number): number | null {
  if (whole <= 0) return null;
  return Math.round((part / whole) * 10_000) / 100;
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
 * Version order as a person reads it (semver-aware): the dot-separated numbers compare as
 * numbers (1.10.0 after 1.9.0), a pre-release comes before its release (2.0.0-beta.2 before
 * 2.0.0), build metadata (+…) is ignored; a part that is not a number compares as text after
 * the numbers. No version ('' or null) comes first. Linear in the versions' length.
 */
export function compareVersions(a: string | null, b: string | null): number {
  if (!a || !b) return (a ? 1 : 0) - (b ? 1 : 0);
  const split = (v: string) => {
    const core = v.split('+', 1)[0] ?? '';
    const dash = core.indexOf('-');
    return dash < 0 ? { main: core, pre: null } : { main: core.slice(0, dash), pre: core.slice(dash + 1) };
  };
  const parts = (x: string) => x.split('.');
  const part = (x: string | undefined, y: string | undefined): number => {
    if (x === y) return 0;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x),
      ny = /^\d+$/.test(y);
    if (nx && ny) return Number(x) - Number(y) || x.length - y.length;
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  };
  const list = (x: string[], y: string[]) => {
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      const c = part(x[i], y[i]);
      if (c !== 0) return c;
    }
    return 0;
  };
  const [x, y] = [split(a), split(b)];
  const main = list(parts(x.main), parts(y.main));
  if (main !== 0) return Math.sign(main);
  if (x.pre === null || y.pre === null) return (x.pre === null ? 1 : 0) - (y.pre === null ? 1 : 0);
  return Math.sign(list(parts(x.pre), parts(y.pre))) || (a < b ? -1 : a > b ? 1 : 0);
}

/** z for a two-sided 95 % interval. */
export const Z95 = 1.959964;

/** A confidence interval of a percentage, in percent with two decimals. */
export interface Interval {
  low: number;
  high: number;
}

/**
 * The Wilson score interval (95 %) of a share `ok` of `n`, in percent: unlike the normal
 * approximation it stays inside [0, 100] and is honest for small n and shares near 100 %
 * (10 of 10 crash-free is 72.25–100 %, not 100 ± 0). Null without trials.
 */
export function wilson(ok: number, n: number, z = Z95): Interval | null {
  if (n <= 0) return null;
  const k = Math.min(Math.max(ok, 0), n);
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  // Bounds rounded outwards, so the stated interval always holds the exact one.
  return {
    low: Math.max(0, Math.floor((centre - half) * 10_000) / 100),
    high: Math.min(100, Math.ceil((centre + half) * 10_000) / 100),
  };
}

/** The crash-free interval of a release: the Wilson interval of its sessions (or users) without a fatal crash. */
export function crashFreeInterval(total: number, crashed: number): Interval | null {
  return wilson(total - Math.min(Math.max(crashed, 0), total), total);
}

/**
 * "Significantly worse than the previous release": the release's whole 95 % interval lies below
 * the previous release's, so the gap is not the noise of a small early rollout. Returns the gap
 * in points (previous low − this high, > 0 when significant), or null when either is unknown.
 */
export function significanceGap(current: Interval | null, previous: Interval | null): number | null {
  if (!current || !previous) return null;
  return Math.round((previous.low - current.high) * 100) / 100;
}

export function significantlyWorse(current: Interval | null, previous: Interval | null): boolean {
  const gap = significanceGap(current, previous);
  return gap !== null && gap > 0;
}

/**
 * Each release's previous one: the next lower version (semver order) among those given that has
 * sessions. Keys are the versions; the lowest has none.
 */
export function previousVersions(versions: readonly string[]): Map<string, string> {
  const sorted = [...new Set(versions.filter((v) => v !== ''))].sort(compareVersions);
  const previous = new Map<string, string>();
  let before: string | undefined;
  for (const v of sorted) {
    if (before !== undefined) previous.set(v, before);
    before = v;
  }
  return previous;
}

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
export function groupBadge(
  g: {
    status: string;
    firstSeenAt: number;
    /** when it was last reopened by a regression */
    regressedAt: number | null;
    /** when a person last changed its status */
    movedByHandAt: number | null;
  },
  now: number,
): GroupBadge {
  if (
    g.status === 'open' &&
    g.regressedAt !== null &&
    now - g.regressedAt < BADGE_MS &&
    (g.movedByHandAt === null || g.movedByHandAt < g.regressedAt)
  )
    return 'regressed';
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

/**
 * Which days of a range the Releases page reads from kept counts, and which it counts from
 * session rows (docs/decisions.md, "Exact release counts of quiet days"). Counting rows exactly
 * means reading every session of the range; a day's counts stop changing once no fact about its
 * sessions arrives, so they are kept per day once the day has been over and untouched for
 * `quietMs`, and used while no fact has touched the day since. A fact whose insert started
 * before the counts were taken but committed after may be missing from them: its touch is then
 * younger than `quietMs` before them, which makes them stale (inserts take far less than
 * `quietMs`). Times are the store's clock, in ms.
 */
export interface DayState {
  /** the day's latest session-fact insert, if any */
  touchedAt?: number;
  /** when the day's kept counts were taken, if any */
  countedAt?: number;
}

export interface DayPlan {
  /** days whose kept counts hold */
  kept: string[];
  /** days counted from session rows */
  counted: string[];
  /** of `counted`, the days whose counts can be kept, as of `now` */
  toKeep: string[];
}

/** `days`: 'YYYY-MM-DD' UTC days of the range, in order; `now`: the store's clock. */
export function planDays(
  days: readonly string[],
  state: ReadonlyMap<string, DayState>,
  now: number,
  quietMs: number,
): DayPlan {
  const plan: DayPlan = { kept: [], counted: [], toKeep: [] };
  const quietSince = (t: number | undefined, at: number) => t === undefined || t < at - quietMs;
  for (const day of days) {
    const s = state.get(day) ?? {};
    if (s.countedAt !== undefined && quietSince(s.touchedAt, s.countedAt)) {
      plan.kept.push(day);
      continue;
    }
    plan.counted.push(day);
    if (Date.parse(`${day}T00:00:00Z`) + DAY_MS <= now - quietMs && quietSince(s.touchedAt, now)) plan.toKeep.push(day);
  }
  return plan;
}
