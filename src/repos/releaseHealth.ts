import type { ClickHouse } from '../stores/clickhouse/port.ts';

/**
 * ClickHouse `release_health_daily` and `release_adoption_hourly`: the sketches of sessions,
 * users, crashed sessions and crashed users per (project, UTC day of the session's start, app
 * version, platform), and of sessions per UTC hour, kept by their views over session_facts
 * (clickhouse/007_release_health.sql). Reads merge the states of a range.
 */
const DAILY = 'release_health_daily';
const HOURLY = 'release_adoption_hourly';
// the same states per environment (clickhouse/008_crash_context.sql), read when one is asked for
const ENV_DAILY = 'release_health_env_daily';

/** The figures of one release over a range, or over one UTC day of it. */
export interface ReleaseCounts {
  appVersion: string;
  platform: string;
  sessions: number;
  users: number;
  crashedSessions: number;
  crashedUsers: number;
}

/** Whole UTC days [fromMs, toMs), optionally one platform, optionally one environment. */
export interface HealthRange { fromMs: number; toMs: number; platform?: string; environment?: string }

export interface RangeFigures {
  totals: ReleaseCounts[];
  daily: (ReleaseCounts & { day: string })[];
}

const sec = (ms: number) => Math.floor(ms / 1000);
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const onePlatform = (p: string | undefined) => (p === undefined ? '' : ' AND platform = {platform:String}');
const key = (x: { v: string; p: string }) => `${x.p}\u0000${x.v}`;

export function releaseHealthRepo(ch: ClickHouse) {
  return {
    /**
     * Each release's figures over the range and per UTC day of it, in one pass over the daily
     * states (GROUPING SETS: each state is read and decoded once for both).
     */
    async range(projectId: string, r: HealthRange): Promise<RangeFigures> {
      const rows = await ch.query<{ d: string; v: string; p: string; s: number; u: number; cs: number; cu: number; whole: number }>(
        `SELECT toString(day) AS d, app_version AS v, platform AS p,
           uniqCombinedMerge(14)(sessions) AS s, uniqCombinedMerge(14)(users) AS u,
           uniqCombinedMerge(14)(crashed_sessions) AS cs, uniqCombinedMerge(14)(crashed_users) AS cu,
           grouping(d) AS whole
         FROM ${r.environment === undefined ? DAILY : ENV_DAILY}
         WHERE project_id = {project:String}${r.environment === undefined ? '' : ' AND environment = {env:String}'}${onePlatform(r.platform)}
           AND day >= {from:Date} AND day < {to:Date}
         GROUP BY GROUPING SETS ((d, v, p), (v, p))`,
        { project: projectId, platform: r.platform ?? '', env: r.environment ?? '', from: date(r.fromMs), to: date(r.toMs) },
      );
      const out: RangeFigures = { totals: [], daily: [] };
      for (const x of rows) {
        const c = { appVersion: x.v, platform: x.p, sessions: Number(x.s), users: Number(x.u), crashedSessions: Number(x.cs), crashedUsers: Number(x.cu) };
        if (c.sessions === 0) continue;
        // grouping(d) is 1 in the per-release set, where d is not part of the key (the SQL standard's sense).
        if (Number(x.whole) === 1) out.totals.push(c);
        else out.daily.push({ day: x.d, ...c });
      }
      out.daily.sort((a, b) => a.day.localeCompare(b.day) || a.appVersion.localeCompare(b.appVersion) || a.platform.localeCompare(b.platform));
      return out;
    },

    /** Sessions per release (key `platform\0version`) in the 24 h and the 7 days that end at `endMs` (adoption). */
    async adoption(projectId: string, endMs: number, platform?: string): Promise<{ day: Map<string, number>; week: Map<string, number> }> {
      const rows = await ch.query<{ v: string; p: string; s24: number; s7: number }>(
        `SELECT app_version AS v, platform AS p,
           uniqCombinedMergeIf(14)(sessions, hour >= toDateTime({dayFrom:UInt32}, 'UTC')) AS s24, uniqCombinedMerge(14)(sessions) AS s7
         FROM ${HOURLY}
         WHERE project_id = {project:String}${onePlatform(platform)}
           AND hour >= toDateTime({weekFrom:UInt32}, 'UTC') AND hour < toDateTime({end:UInt32}, 'UTC')
         GROUP BY v, p`,
        { project: projectId, platform: platform ?? '', dayFrom: sec(endMs - 86_400_000), weekFrom: sec(endMs - 7 * 86_400_000), end: sec(endMs) },
      );
      return { day: new Map(rows.map((x) => [key(x), Number(x.s24)])), week: new Map(rows.map((x) => [key(x), Number(x.s7)])) };
    },

    /** The first and last hour each release had a session in, over all time (reads no state). */
    async seen(projectId: string, platform?: string): Promise<Map<string, { first: number; last: number }>> {
      const rows = await ch.query<{ v: string; p: string; f: number; l: number }>(
        `SELECT app_version AS v, platform AS p, toUnixTimestamp(min(hour)) AS f, toUnixTimestamp(max(hour)) AS l
         FROM ${HOURLY} WHERE project_id = {project:String}${onePlatform(platform)} GROUP BY v, p`,
        { project: projectId, platform: platform ?? '' });
      return new Map(rows.map((x) => [key(x), { first: Number(x.f) * 1000, last: Number(x.l) * 1000 }]));
    },
  };
}

export type ReleaseHealthRepo = ReturnType<typeof releaseHealthRepo>;
