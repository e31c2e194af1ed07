import {
  adoptionEnd,
  compareVersions,
  crashFree,
  crashFreeInterval,
  percent,
  previousVersions,
  significantlyWorse,
  type Interval,
} from '../domain/releaseHealth.ts';
import { DAY_MS, utcDayStart } from '../lib/time.ts';
import { deviceFingerprint } from '../domain/crashGrouping.ts';
import { validEnvironment } from '../domain/crashContext.ts';
import { InvalidParameterError } from '../domain/errors.ts';
import { isoMs } from '../lib/time.ts';
import type { SessionStart } from '../domain/session.ts';
import type { SessionFactSource, SessionsRepo } from '../repos/sessions.ts';
import { factRow, type SessionFactsRepo } from '../repos/sessionFacts.ts';
import { ALL, type HealthRange, type ReleaseCounts, type ReleaseHealthRepo } from '../repos/releaseHealth.ts';
import type { CrashOccurrencesRepo, KeyAliases } from '../repos/crashOccurrences.ts';
import type { CrashGroupActivityRepo } from '../repos/crashGroupActivity.ts';
import { computedResource } from '../repos/exportCore/memory.ts';
import type { ParquetColumn } from '../repos/exportCore/parquet.ts';
import type { DateFilter } from '../repos/exportCore/types.ts';

/** One release's figures over a range: the Releases page's row and the export's. */
export interface ReleaseRow {
  appVersion: string | null;
  platform: string | null;
  sessions: number;
  users: number;
  crashedSessions: number;
  crashedUsers: number;
  /** % of sessions with no fatal crash; null without sessions */
  crashFreeSessions: number | null;
  crashFreeUsers: number | null;
  /** % of the project's sessions (of the platform, when filtered) in the 24 h / 7 d that end with the range, or now */
  adoption24h: number | null;
  adoption7d: number | null;
  /** crash groups whose first occurrence on this platform came from this version (all time) */
  newGroups: number;
  /** crash groups a regression from this release reopened (all time) */
  regressedGroups: number;
  firstSeenAt: string | null;
  /** the latest session start of the release (never the end of a bucket, so never in the future) */
  lastSeenAt: string | null;
  /** 95 % Wilson score intervals of the crash-free shares, in percent */
  crashFreeSessionsInterval: Interval | null;
  crashFreeUsersInterval: Interval | null;
  /** the next lower version (semver order) with sessions in the range, on the same platform(s) */
  previousVersion: string | null;
  /** this release's crash-free sessions interval lies wholly below the previous release's */
  significantlyWorse: boolean;
}

/** A version over all platforms (or the one filtered on: then `platform` names it), with each platform's row. */
export interface VersionRow extends ReleaseRow {
  platforms: ReleaseRow[];
}

export const RELEASE_SORTS = ['version', 'sessions', 'adoption', 'crashFree', 'lastSeen'] as const;
export type ReleaseSort = (typeof RELEASE_SORTS)[number];

export interface DailyPoint {
  day: string;
  appVersion: string | null;
  platform: string | null;
  sessions: number;
  users: number;
  crashFreeSessions: number | null;
  crashFreeUsers: number | null;
}

const int = (name: string): ParquetColumn => ({ name, type: 'int64', nullable: false });
const dbl = (name: string): ParquetColumn => ({ name, type: 'double', nullable: true });
export const RELEASE_PARQUET: ParquetColumn[] = [
  { name: 'appVersion', type: 'string', nullable: true },
  { name: 'platform', type: 'string', nullable: true },
  int('sessions'),
  int('users'),
  int('crashedSessions'),
  int('crashedUsers'),
  dbl('crashFreeSessions'),
  dbl('crashFreeUsers'),
  dbl('adoption24h'),
  dbl('adoption7d'),
  int('newGroups'),
  int('regressedGroups'),
  { name: 'firstSeenAt', type: 'timestamp', nullable: true },
  { name: 'lastSeenAt', type: 'timestamp', nullable: true },
];
export const RELEASE_FIELDS = RELEASE_PARQUET.map((c) => c.name);

/** The releases export's filter: a range of session starts, optionally one platform and one environment. */
export type ReleaseFilter = DateFilter & { platform?: string; environment?: string };

const DEFAULT_DAYS = 14;
const MAX_DAYS = 366;
const orNull = (s: string | null) => (s === '' ? null : s);
const key = (v: string, p: string | null) => `${p ?? ALL}\u0000${v}`;

/** The export's order: most recently seen first. */
const bySeen = (a: ReleaseRow, b: ReleaseRow) =>
  (b.lastSeenAt ?? '').localeCompare(a.lastSeenAt ?? '') ||
  b.sessions - a.sessions ||
  compareVersions(b.appVersion, a.appVersion) ||
  (a.platform ?? '').localeCompare(b.platform ?? '');

const nullsLast = (x: number | null, y: number | null) => (x === null ? (y === null ? 0 : 1) : y === null ? -1 : 0);
const SORTERS: Record<ReleaseSort, (a: ReleaseRow, b: ReleaseRow) => number> = {
  version: (a, b) => compareVersions(a.appVersion, b.appVersion),
  sessions: (a, b) => a.sessions - b.sessions,
  adoption: (a, b) => (a.adoption7d ?? -1) - (b.adoption7d ?? -1) || (a.adoption24h ?? -1) - (b.adoption24h ?? -1),
  crashFree: (a, b) =>
    nullsLast(a.crashFreeSessions, b.crashFreeSessions) || (a.crashFreeSessions ?? 0) - (b.crashFreeSessions ?? 0),
  lastSeen: (a, b) => (a.lastSeenAt ?? '').localeCompare(b.lastSeenAt ?? ''),
};

/** Rows in the order asked for; ties fall back to the newest version first. */
export function sortReleases<T extends ReleaseRow>(rows: readonly T[], sort: ReleaseSort, order: 'asc' | 'desc'): T[] {
  const sign = order === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => sign * SORTERS[sort](a, b) || compareVersions(b.appVersion, a.appVersion));
}

/** A release to compare: a version, on one platform or (none) all of them. */
interface ReleasePick {
  appVersion: string;
  platform?: string;
}

export interface ReleasesDeps {
  facts: SessionFactsRepo;
  health: ReleaseHealthRepo;
  sessions: SessionsRepo;
  occurrences: CrashOccurrencesRepo;
  activity: CrashGroupActivityRepo;
  /** The project's merged groups' keys and the keys they lead to (a merged group is not new in a release of its own). */
  mergedKeys?: (projectId: string) => Promise<KeyAliases>;
  now?: () => number;
}

/**
 * Release health (docs/decisions.md, "Release health"): ingestion writes a session's facts as
 * it starts and crashes; the Releases page, its compare view and the export read the hourly
 * states per release, with new and regressed groups from the crash workflow's stores.
 */
export function releasesService(d: ReleasesDeps) {
  const now = d.now ?? Date.now;

  /** The whole UTC days a request names (widened to whole days), or the last 14 including today; at most 366. */
  function range(f: ReleaseFilter): HealthRange {
    const toMs = Math.ceil((f.toMsExclusive ?? now() + 1) / DAY_MS) * DAY_MS;
    const fromMs = utcDayStart(f.fromMs ?? toMs - DEFAULT_DAYS * DAY_MS);
    if (fromMs >= toMs) throw new InvalidParameterError('from must be before to');
    if (toMs - fromMs > MAX_DAYS * DAY_MS)
      throw new InvalidParameterError(`A release range covers at most ${MAX_DAYS} days`);
    return { fromMs, toMs, platform: f.platform, environment: f.environment };
  }

  const dailyPoint = (p: ReleaseCounts & { day: string }): DailyPoint => ({
    day: p.day,
    appVersion: orNull(p.appVersion),
    platform: p.platform === null ? null : orNull(p.platform),
    sessions: p.sessions,
    users: p.users,
    crashFreeSessions: crashFree(p.sessions, p.crashedSessions),
    crashFreeUsers: crashFree(p.users, p.crashedUsers),
  });

  /**
   * Every release of the range: one row per version (over all platforms, or the one filtered on)
   * with its platforms' rows, and the daily series per version and per version and platform.
   */
  async function figures(projectId: string, r: HealthRange) {
    const end = adoptionEnd(r.toMs, now());
    const [f, adoption, seen, fresh, regressed] = await Promise.all([
      d.health.range(projectId, r),
      d.health.adoption(projectId, end, r.platform),
      d.health.seen(projectId, r.platform),
      (async () => d.occurrences.newGroupsByRelease(projectId, await d.mergedKeys?.(projectId)))(),
      d.activity.regressionsByRelease(projectId),
    ]);
    // Adoption of a version over all platforms: its platforms' sessions (a session has one platform).
    const overAll = (m: Map<string, number>) => {
      const out = new Map(m);
      for (const [k, n] of m) {
        const v = k.slice(k.indexOf('\u0000') + 1);
        out.set(key(v, null), (out.get(key(v, null)) ?? 0) + n);
      }
      return out;
    };
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    const [dayAll, weekAll] = [sum(adoption.day), sum(adoption.week)];
    const [day, week] = [overAll(adoption.day), overAll(adoption.week)];
    const count = (list: { appVersion: string; platform: string; groups: number }[]) => {
      const m = new Map<string, number>();
      for (const x of list) {
        for (const k of [key(x.appVersion, x.platform), key(x.appVersion, null)]) m.set(k, (m.get(k) ?? 0) + x.groups);
      }
      return m;
    };
    const [freshBy, regressedBy] = [count(fresh), count(regressed)];
    const row = (c: ReleaseCounts): ReleaseRow => {
      const k = key(c.appVersion, c.platform);
      const s = seen.get(k);
      return {
        appVersion: orNull(c.appVersion),
        platform: c.platform === null ? (r.platform ?? null) : orNull(c.platform),
        sessions: c.sessions,
        users: c.users,
        crashedSessions: c.crashedSessions,
        crashedUsers: c.crashedUsers,
        crashFreeSessions: crashFree(c.sessions, c.crashedSessions),
        crashFreeUsers: crashFree(c.users, c.crashedUsers),
        adoption24h: percent(day.get(k) ?? 0, dayAll),
        adoption7d: percent(week.get(k) ?? 0, weekAll),
        newGroups: freshBy.get(k) ?? 0,
        regressedGroups: regressedBy.get(k) ?? 0,
        firstSeenAt: s ? isoMs(s.first) : null,
        lastSeenAt: s ? isoMs(s.last) : null,
        crashFreeSessionsInterval: crashFreeInterval(c.sessions, c.crashedSessions),
        crashFreeUsersInterval: crashFreeInterval(c.users, c.crashedUsers),
        previousVersion: null,
        significantlyWorse: false,
      };
    };
    /** Each row against the next lower version among the same rows (one platform, or all). */
    const judge = (rows: ReleaseRow[]) => {
      const prev = previousVersions(rows.map((x) => x.appVersion ?? ''));
      const byVersion = new Map(rows.map((x) => [x.appVersion ?? '', x]));
      for (const x of rows) {
        const p = byVersion.get(prev.get(x.appVersion ?? '') ?? '\u0000');
        x.previousVersion = p?.appVersion ?? null;
        x.significantlyWorse = significantlyWorse(x.crashFreeSessionsInterval, p?.crashFreeSessionsInterval ?? null);
      }
      return rows;
    };
    const platformRows = f.totals.filter((c) => c.platform !== null).map(row);
    for (const p of new Set(platformRows.map((x) => x.platform))) judge(platformRows.filter((x) => x.platform === p));
    const versions: VersionRow[] = judge(f.totals.filter((c) => c.platform === null).map(row)).map((v) => ({
      ...v,
      platforms: platformRows.filter((x) => x.appVersion === v.appVersion).sort((a, b) => b.sessions - a.sessions),
    }));
    return {
      versions,
      platformRows: [...platformRows].sort(bySeen),
      daily: f.daily.filter((p) => p.platform === null).map(dailyPoint),
      dailyByPlatform: f.daily.filter((p) => p.platform !== null).map(dailyPoint),
    };
  }

  const sameRelease = (
    x: { appVersion: string | null; platform: string | null },
    y: { appVersion: string | null; platform: string | null },
  ) => (x.appVersion ?? '') === (y.appVersion ?? '') && (x.platform ?? '') === (y.platform ?? '');

  return {
    /** A session started: its fact, from the payload when this start created it, else as Postgres holds it (a retry). */
    async started(projectId: string, s: SessionStart, created: boolean): Promise<void> {
      const src = created
        ? {
            project_id: projectId,
            id: s.sessionId,
            started_at: s.startedAt,
            app_version: s.device.appVersion ?? null,
            platform: s.device.platform ?? null,
            user_id: s.userId ?? null,
            device_fingerprint: deviceFingerprint(s.device),
            status: 'active' as const,
            os_version: s.device.osVersion ?? null,
            brand: s.device.brand ?? null,
            model: s.device.model ?? null,
            network_type: s.device.networkType ?? null,
            environment: validEnvironment(s.environment),
          }
        : await d.sessions.factOf(projectId, s.sessionId);
      if (src) await d.facts.add(factRow(src, false));
    },

    /** A session's first fatal crash (the crash workflow read the session): its crash fact, counted in the release and hour of its start. */
    async crashed(
      projectId: string,
      sessionId: string,
      s: Omit<SessionFactSource, 'project_id' | 'id'>,
    ): Promise<void> {
      await d.facts.add(factRow({ ...s, project_id: projectId, id: sessionId }, true));
    },

    range,

    /**
     * The Releases page: a page of the range's versions in the order asked for (newest version
     * first by default), each with its platforms, every version of the range (newest first, for
     * the chart picker and compare), and the daily series of every version.
     */
    async page(
      projectId: string,
      f: ReleaseFilter,
      page: number,
      limit: number,
      sort: ReleaseSort = 'version',
      order: 'asc' | 'desc' = 'desc',
    ) {
      const r = range(f);
      const all = await figures(projectId, r);
      const sorted = sortReleases(all.versions, sort, order);
      const data = sorted.slice((page - 1) * limit, page * limit);
      return {
        from: isoMs(r.fromMs),
        to: isoMs(r.toMs),
        platform: r.platform ?? null,
        environment: r.environment ?? null,
        sort,
        order,
        data,
        total: sorted.length,
        page,
        limit,
        pages: Math.ceil(sorted.length / limit),
        versions: sortReleases(all.versions, 'version', 'desc').map((x) => ({
          appVersion: x.appVersion,
          sessions: x.sessions,
        })),
        daily: all.daily,
      };
    },

    /** Two releases side by side over the range, with their daily series; a platform of '' or none: all platforms. */
    async compare(projectId: string, f: ReleaseFilter, a: ReleasePick, b: ReleasePick) {
      const r = range(f);
      const all = await figures(projectId, { ...r, platform: undefined });
      const find = (x: ReleasePick) =>
        (x.platform
          ? all.platformRows.find((row) => sameRelease(row, { appVersion: x.appVersion, platform: x.platform ?? '' }))
          : all.versions.find((row) => (row.appVersion ?? '') === x.appVersion)) ?? null;
      const series = (x: ReleasePick) =>
        x.platform
          ? all.dailyByPlatform.filter((p) => sameRelease(p, { appVersion: x.appVersion, platform: x.platform ?? '' }))
          : all.daily.filter((p) => (p.appVersion ?? '') === x.appVersion);
      const [ra, rb] = [find(a), find(b)];
      const strip = (x: ReleaseRow | null) => (x && 'platforms' in x ? { ...x, platforms: undefined } : x);
      return {
        from: isoMs(r.fromMs),
        to: isoMs(r.toMs),
        a: strip(ra),
        b: strip(rb),
        /** B's crash-free sessions interval lies wholly below A's */
        bSignificantlyWorse: significantlyWorse(
          rb?.crashFreeSessionsInterval ?? null,
          ra?.crashFreeSessionsInterval ?? null,
        ),
        daily: [...series(a).map((p) => ({ ...p, release: 'a' })), ...series(b).map((p) => ({ ...p, release: 'b' }))],
      };
    },

    /** GET /export/releases: a row per version and platform over from/to, most recently seen first. */
    export: computedResource<ReleaseFilter>({
      name: 'releases',
      fields: RELEASE_FIELDS,
      parquet: RELEASE_PARQUET,
      rows: async (projectId, f) =>
        (await figures(projectId, range(f))).platformRows.map((x) =>
          Object.fromEntries(RELEASE_FIELDS.map((k) => [k, x[k as keyof ReleaseRow]])),
        ),
    }),

    drain: d.facts.drain,
    batcher: d.facts.batcher,
  };
}

export type ReleasesService = ReturnType<typeof releasesService>;
