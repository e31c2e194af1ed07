import type { ClickHouse } from '../stores/clickhouse/port.ts';

/**
 * ClickHouse `release_health_hourly`: the uniq states of sessions, users, crashed sessions and
 * crashed users per (project, UTC hour of the session's start, app version, platform), kept by
 * the view over session_facts (clickhouse/007_release_health.sql). Reads merge a range of hours.
 */
const HOURLY = 'release_health_hourly';

/** The figures of one release (or one release's day). */
export interface ReleaseCounts {
  appVersion: string;
  platform: string;
  sessions: number;
  users: number;
  crashedSessions: number;
  crashedUsers: number;
}

interface CountRow { v: string; p: string; s: number; u: number; cs: number; cu: number }

const COUNTS = `app_version AS v, platform AS p, uniqMerge(sessions) AS s, uniqMerge(users) AS u,
  uniqMerge(crashed_sessions) AS cs, uniqMerge(crashed_users) AS cu`;

const RANGE = `project_id = {project:String} AND hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')`;

const toCounts = (r: CountRow): ReleaseCounts => ({
  appVersion: r.v, platform: r.p, sessions: Number(r.s), users: Number(r.u), crashedSessions: Number(r.cs), crashedUsers: Number(r.cu),
});

/** A range of hours [fromMs, toMs), optionally one platform. */
export interface HealthRange { fromMs: number; toMs: number; platform?: string }

const params = (projectId: string, r: HealthRange) => ({
  project: projectId, from: Math.floor(r.fromMs / 1000), to: Math.ceil(r.toMs / 1000), platform: r.platform ?? '',
});
const platformFilter = (r: HealthRange) => (r.platform === undefined ? '' : ' AND platform = {platform:String}');

export function releaseHealthRepo(ch: ClickHouse) {
  return {
    /** Each release's figures over the range (releases with no session in it are absent). */
    async totals(projectId: string, r: HealthRange): Promise<ReleaseCounts[]> {
      const rows = await ch.query<CountRow>(
        `SELECT ${COUNTS} FROM ${HOURLY} WHERE ${RANGE}${platformFilter(r)} GROUP BY v, p`, params(projectId, r));
      return rows.map(toCounts);
    },

    /** Each release's figures per UTC day of the range, for the releases given (all when omitted). */
    async daily(projectId: string, r: HealthRange, releases?: { appVersion: string; platform: string }[]): Promise<(ReleaseCounts & { day: string })[]> {
      if (releases && releases.length === 0) return [];
      const only = releases ? ' AND has(arrayZip({versions:Array(String)}, {platforms:Array(String)}), (app_version, platform))' : '';
      const rows = await ch.query<CountRow & { d: string }>(
        `SELECT toString(toDate(hour)) AS d, ${COUNTS} FROM ${HOURLY} WHERE ${RANGE}${platformFilter(r)}${only}
         GROUP BY d, v, p ORDER BY d, v, p`,
        { ...params(projectId, r), versions: (releases ?? []).map((x) => x.appVersion), platforms: (releases ?? []).map((x) => x.platform) });
      return rows.map((x) => ({ day: x.d, ...toCounts(x) }));
    },

    /** Sessions per release in a window (adoption's numerators; their sum is the denominator). */
    async sessionsIn(projectId: string, r: HealthRange): Promise<Map<string, number>> {
      const rows = await ch.query<{ v: string; p: string; s: number }>(
        `SELECT app_version AS v, platform AS p, uniqMerge(sessions) AS s FROM ${HOURLY} WHERE ${RANGE}${platformFilter(r)} GROUP BY v, p`,
        params(projectId, r));
      return new Map(rows.map((x) => [`${x.p}\u0000${x.v}`, Number(x.s)]));
    },

    /** The first and last hour each release had a session in, over all time (reads no state). */
    async seen(projectId: string, platform?: string): Promise<Map<string, { first: number; last: number }>> {
      const rows = await ch.query<{ v: string; p: string; f: number; l: number }>(
        `SELECT app_version AS v, platform AS p, toUnixTimestamp(min(hour)) AS f, toUnixTimestamp(max(hour)) AS l
         FROM ${HOURLY} WHERE project_id = {project:String}${platform === undefined ? '' : ' AND platform = {platform:String}'} GROUP BY v, p`,
        { project: projectId, platform: platform ?? '' });
      return new Map(rows.map((x) => [`${x.p}\u0000${x.v}`, { first: Number(x.f) * 1000, last: Number(x.l) * 1000 }]));
    },
  };
}

export type ReleaseHealthRepo = ReturnType<typeof releaseHealthRepo>;
