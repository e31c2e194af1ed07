import { adoptionEnd, crashFree, HOUR_MS, percent, releaseKey } from '../domain/releaseHealth.ts';
import { DAY_MS } from '../domain/exportParams.ts';
import { deviceFingerprint } from '../domain/crashGrouping.ts';
import { validEnvironment } from '../domain/crashContext.ts';
import { InvalidParameterError } from '../domain/errors.ts';
import { isoMs } from '../domain/time.ts';
import type { SessionStart } from '../domain/session.ts';
import type { SessionFactSource, SessionsRepo } from '../repos/sessions.ts';
import { factRow, type SessionFactsRepo } from '../repos/sessionFacts.ts';
import type { HealthRange, ReleaseCounts, ReleaseHealthRepo } from '../repos/releaseHealth.ts';
import type { CrashOccurrencesRepo } from '../repos/crashOccurrences.ts';
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
  lastSeenAt: string | null;
}

export interface DailyPoint {
  day: string; appVersion: string | null; platform: string | null; sessions: number; users: number;
  crashFreeSessions: number | null; crashFreeUsers: number | null;
}

const int = (name: string): ParquetColumn => ({ name, type: 'int64', nullable: false });
const dbl = (name: string): ParquetColumn => ({ name, type: 'double', nullable: true });
export const RELEASE_PARQUET: ParquetColumn[] = [
  { name: 'appVersion', type: 'string', nullable: true }, { name: 'platform', type: 'string', nullable: true },
  int('sessions'), int('users'), int('crashedSessions'), int('crashedUsers'), dbl('crashFreeSessions'), dbl('crashFreeUsers'),
  dbl('adoption24h'), dbl('adoption7d'), int('newGroups'), int('regressedGroups'),
  { name: 'firstSeenAt', type: 'timestamp', nullable: true }, { name: 'lastSeenAt', type: 'timestamp', nullable: true },
];
export const RELEASE_FIELDS = RELEASE_PARQUET.map((c) => c.name);

/** The releases export's filter: a range of session starts, optionally one platform and one environment. */
export type ReleaseFilter = DateFilter & { platform?: string; environment?: string };

const DEFAULT_DAYS = 14;
const MAX_DAYS = 366;
const orNull = (s: string) => (s === '' ? null : s);

export interface ReleasesDeps {
  facts: SessionFactsRepo;
  health: ReleaseHealthRepo;
  sessions: SessionsRepo;
  occurrences: CrashOccurrencesRepo;
  activity: CrashGroupActivityRepo;
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
    const fromMs = Math.floor((f.fromMs ?? toMs - DEFAULT_DAYS * DAY_MS) / DAY_MS) * DAY_MS;
    if (fromMs >= toMs) throw new InvalidParameterError('from must be before to');
    if (toMs - fromMs > MAX_DAYS * DAY_MS) throw new InvalidParameterError(`A release range covers at most ${MAX_DAYS} days`);
    return { fromMs, toMs, platform: f.platform, environment: f.environment };
  }

  const dailyPoint = (p: ReleaseCounts & { day: string }): DailyPoint => ({
    day: p.day, appVersion: orNull(p.appVersion), platform: orNull(p.platform), sessions: p.sessions, users: p.users,
    crashFreeSessions: crashFree(p.sessions, p.crashedSessions), crashFreeUsers: crashFree(p.users, p.crashedUsers),
  });

  /** Every release of the range, most recently seen first, and the daily series of each. */
  async function figures(projectId: string, r: HealthRange): Promise<{ rows: ReleaseRow[]; daily: DailyPoint[] }> {
    const end = adoptionEnd(r.toMs, now());
    const [f, adoption, seen, fresh, regressed] = await Promise.all([
      d.health.range(projectId, r),
      d.health.adoption(projectId, end, r.platform),
      d.health.seen(projectId, r.platform),
      d.occurrences.newGroupsByRelease(projectId),
      d.activity.regressionsByRelease(projectId),
    ]);
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    const [dayAll, weekAll] = [sum(adoption.day), sum(adoption.week)];
    const count = (list: { appVersion: string; platform: string; groups: number }[]) => new Map(list.map((x) => [releaseKey(x), x.groups]));
    const [freshBy, regressedBy] = [count(fresh), count(regressed)];
    const rows = f.totals.map((c: ReleaseCounts): ReleaseRow => {
      const k = releaseKey(c);
      const s = seen.get(k);
      return {
        appVersion: orNull(c.appVersion), platform: orNull(c.platform),
        sessions: c.sessions, users: c.users, crashedSessions: c.crashedSessions, crashedUsers: c.crashedUsers,
        crashFreeSessions: crashFree(c.sessions, c.crashedSessions), crashFreeUsers: crashFree(c.users, c.crashedUsers),
        adoption24h: percent(adoption.day.get(k) ?? 0, dayAll), adoption7d: percent(adoption.week.get(k) ?? 0, weekAll),
        newGroups: freshBy.get(k) ?? 0, regressedGroups: regressedBy.get(k) ?? 0,
        firstSeenAt: s ? isoMs(s.first) : null, lastSeenAt: s ? isoMs(s.last + HOUR_MS - 1) : null,
      };
    }).sort((a, b) => (b.lastSeenAt ?? '').localeCompare(a.lastSeenAt ?? '') || b.sessions - a.sessions
      || (a.appVersion ?? '').localeCompare(b.appVersion ?? '') || (a.platform ?? '').localeCompare(b.platform ?? ''));
    return { rows, daily: f.daily.map(dailyPoint) };
  }

  const sameRelease = (x: { appVersion: string | null; platform: string | null }, y: { appVersion: string | null; platform: string | null }) =>
    (x.appVersion ?? '') === (y.appVersion ?? '') && (x.platform ?? '') === (y.platform ?? '');

  return {
    /** A session started: its fact, from the payload when this start created it, else as Postgres holds it (a retry). */
    async started(projectId: string, s: SessionStart, created: boolean): Promise<void> {
      const src = created
        ? {
          project_id: projectId, id: s.sessionId, started_at: s.startedAt, app_version: s.device.appVersion ?? null,
          platform: s.device.platform ?? null, user_id: s.userId ?? null, device_fingerprint: deviceFingerprint(s.device), status: 'active' as const,
          os_version: s.device.osVersion ?? null, brand: s.device.brand ?? null, model: s.device.model ?? null,
          network_type: s.device.networkType ?? null,
          environment: validEnvironment(s.environment),
        }
        : await d.sessions.factOf(projectId, s.sessionId);
      if (src) await d.facts.add(factRow(src, false));
    },

    /** A session's first fatal crash (the crash workflow read the session): its crash fact, counted in the release and hour of its start. */
    async crashed(projectId: string, sessionId: string, s: Omit<SessionFactSource, 'project_id' | 'id'>): Promise<void> {
      await d.facts.add(factRow({ ...s, project_id: projectId, id: sessionId }, true));
    },

    range,

    /**
     * The Releases page: the releases of the range (a page of them, most recently seen first)
     * and the daily series of those releases, for the trend charts and the compare view.
     */
    async page(projectId: string, f: ReleaseFilter, page: number, limit: number) {
      const r = range(f);
      const all = await figures(projectId, r);
      const data = all.rows.slice((page - 1) * limit, page * limit);
      return {
        from: isoMs(r.fromMs), to: isoMs(r.toMs), platform: r.platform ?? null, environment: r.environment ?? null,
        data, total: all.rows.length, page, limit, pages: Math.ceil(all.rows.length / limit),
        daily: all.daily.filter((p) => data.some((x) => sameRelease(x, p))),
      };
    },

    /** Two releases side by side over the range, with their daily series. */
    async compare(projectId: string, f: ReleaseFilter, a: { appVersion: string; platform: string }, b: { appVersion: string; platform: string }) {
      const r = { ...range(f), platform: undefined };
      const all = await figures(projectId, r);
      const find = (x: { appVersion: string; platform: string }) => all.rows.find((row) => sameRelease(row, x)) ?? null;
      return {
        from: isoMs(r.fromMs), to: isoMs(r.toMs), a: find(a), b: find(b),
        daily: all.daily.filter((p) => sameRelease(p, a) || sameRelease(p, b)),
      };
    },

    /** GET /export/releases: the page's rows over from/to, every release. */
    export: computedResource<ReleaseFilter>({
      name: 'releases',
      fields: RELEASE_FIELDS,
      parquet: RELEASE_PARQUET,
      rows: async (projectId, f) => (await figures(projectId, range(f))).rows as unknown as Record<string, unknown>[],
    }),

    drain: d.facts.drain,
    batcher: d.facts.batcher,
  };
}

export type ReleasesService = ReturnType<typeof releasesService>;
