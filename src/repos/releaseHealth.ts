import { DAY_MS, utcDay, utcDaysOf } from '../lib/time.ts';
import { type DayState, planDays } from '../domain/releaseHealth.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';

/**
 * ClickHouse release health: `release_sessions` (one row per session, its release and UTC day:
 * sessions and crashed sessions counted exactly, clickhouse/010_exact_release_sessions.sql),
 * `release_health_daily` (sketches of users and crashed users), `release_adoption_hourly`
 * (sketches of sessions per hour, for adoption) and `release_seen` (first and latest session
 * start), all kept by their views over session_facts; `release_day_counts` keeps the exact
 * counts of quiet days (clickhouse/014_release_day_counts.sql).
 */
const DAILY = 'release_health_daily';
const HOURLY = 'release_adoption_hourly';
const SESSIONS = 'release_sessions';
const SEEN = 'release_seen';
const TOUCHED = 'release_day_touched';
const DAY_COUNTS = 'release_day_counts';
const COUNTED = 'release_day_counted';
// the same states per environment (clickhouse/008_crash_context.sql), read when one is asked for
const ENV_DAILY = 'release_health_env_daily';

/** The figures of one release over a range, or over one UTC day of it; platform null: all platforms together. */
export interface ReleaseCounts {
  appVersion: string;
  platform: string | null;
  /** exact */
  sessions: number;
  /** a sketch: exact to a few thousand, about 0.8 % standard error beyond */
  users: number;
  /** exact */
  crashedSessions: number;
  crashedUsers: number;
}

/** Whole UTC days [fromMs, toMs), optionally one platform, optionally one environment. */
export interface HealthRange {
  fromMs: number;
  toMs: number;
  platform?: string;
  environment?: string;
}

export interface RangeFigures {
  /** per version and platform, and per version over all platforms (platform null) */
  totals: ReleaseCounts[];
  daily: (ReleaseCounts & { day: string })[];
}

const sec = (ms: number) => Math.floor(ms / 1000);
const onePlatform = (p: string | undefined) => (p === undefined ? '' : ' AND platform = {platform:String}');
/** The key part that stands for all platforms together. */
export const ALL = '\u0001';
const key = (x: { v: string; p: string }) => `${x.p}\u0000${x.v}`;
// Per day and release, per release, per day and version, per version: grouping(x) is 1 where x is not in the key.
const SETS = 'GROUPING SETS ((d, v, p), (v, p), (d, v), (v))';
const setKey = (x: { d: string; v: string; p: string; noDay: number; noPlatform: number }) =>
  `${Number(x.noDay) ? '' : x.d}\u0000${x.v}\u0000${Number(x.noPlatform) ? '\u0001' : x.p}`;
const oneEnvironment = (e: string | undefined) => (e === undefined ? '' : ' AND environment = {env:String}');

type DayRow = { d: string; v: string; p: string; s: number; cs: number };

/** Per day, release and platform, the four grouping sets the page reads, as the SQL of the sketches gives them. */
function groupingSets(rows: readonly DayRow[]) {
  const out = new Map<string, DayRow & { noDay: number; noPlatform: number }>();
  const add = (d: string, v: string, p: string, noDay: number, noPlatform: number, x: DayRow) => {
    const k = setKey({ d, v, p, noDay, noPlatform });
    const o = out.get(k);
    if (o) {
      o.s += x.s;
      o.cs += x.cs;
    } else out.set(k, { d, v, p, s: x.s, cs: x.cs, noDay, noPlatform });
  };
  for (const x of rows) {
    const [s, cs] = [Number(x.s), Number(x.cs)];
    const r = { ...x, s, cs };
    add(x.d, x.v, x.p, 0, 0, r);
    add('', x.v, x.p, 1, 0, r);
    add(x.d, x.v, '', 0, 1, r);
    add('', x.v, '', 1, 1, r);
  }
  return [...out.values()];
}

export function releaseHealthRepo(ch: ClickHouse, opts: { quietMs: number }) {
  /**
   * Exact sessions and crashed sessions per day, release and platform over a range: kept counts
   * for the days they still hold, session rows (FINAL) for the others, and the counts of the
   * counted days that have gone quiet kept for next time (src/domain/releaseHealth.ts, planDays).
   */
  async function exactDays(projectId: string, r: HealthRange): Promise<DayRow[]> {
    const args = { project: projectId, platform: r.platform ?? '', from: utcDay(r.fromMs), to: utcDay(r.toMs) };
    const inRange = 'project_id = {project:String} AND day >= {from:Date} AND day < {to:Date}';
    const marks = await ch.query<{ d: string; t: number; k: 'touched' | 'counted' | 'now' }>(
      `SELECT toString(day) AS d, max(touched_at) AS t, 'touched' AS k FROM ${TOUCHED} WHERE ${inRange} GROUP BY day
       UNION ALL SELECT toString(day), max(counted_at), 'counted' FROM ${COUNTED} WHERE ${inRange} GROUP BY day
       UNION ALL SELECT '', toUInt64(toUnixTimestamp64Milli(now64(3))), 'now'`,
      args,
    );
    const state = new Map<string, DayState>();
    let now = 0;
    for (const m of marks) {
      if (m.k === 'now') now = Number(m.t);
      else state.set(m.d, { ...state.get(m.d), [m.k === 'touched' ? 'touchedAt' : 'countedAt']: Number(m.t) });
    }
    const plan = planDays(utcDaysOf(r.fromMs, r.toMs), state, now, opts.quietMs);
    const platform = onePlatform(r.platform);
    const [kept, counted] = await Promise.all([
      plan.kept.length
        ? ch.query<DayRow>(
            `SELECT toString(day) AS d, app_version AS v, platform AS p, argMax(sessions, counted_at) AS s,
               argMax(crashed_sessions, counted_at) AS cs
             FROM ${DAY_COUNTS} WHERE project_id = {project:String} AND day IN {days:Array(Date)}${platform}
             GROUP BY day, app_version, platform`,
            { ...args, days: plan.kept },
          )
        : [],
      plan.counted.length
        ? ch.query<DayRow>(
            `SELECT toString(day) AS d, app_version AS v, platform AS p, count() AS s, countIf(crashed = 1) AS cs
             FROM ${SESSIONS} FINAL WHERE project_id = {project:String} AND day IN {days:Array(Date)}${platform}
             GROUP BY day, app_version, platform
             SETTINGS do_not_merge_across_partitions_select_final = 1`,
            { ...args, days: plan.counted },
          )
        : [],
    ]);
    // A platform's rows alone are not the day's: only a read over every platform is kept. Keeping
    // only spares later reads: the page has its counts either way, so a failed keep fails nothing
    // (the next read over the range tries again).
    if (plan.toKeep.length && r.platform === undefined)
      await keep(projectId, plan.toKeep, counted, now).catch(() => {});
    return [...kept, ...counted];
  }

  /** Counts before marks: a day whose mark is read has its counts. */
  async function keep(projectId: string, days: string[], counted: readonly DayRow[], countedAt: number) {
    const quiet = new Set(days);
    const rows = counted
      .filter((x) => quiet.has(x.d))
      .map((x) => ({
        project_id: projectId,
        day: x.d,
        app_version: x.v,
        platform: x.p,
        sessions: Number(x.s),
        crashed_sessions: Number(x.cs),
        counted_at: countedAt,
      }));
    if (rows.length) await ch.insert(DAY_COUNTS, rows);
    await ch.insert(
      COUNTED,
      days.map((day) => ({ project_id: projectId, day, counted_at: countedAt })),
    );
  }

  return {
    /**
     * Each release's figures over the range and per UTC day of it, per platform and over all
     * platforms: sessions and crashed sessions counted exactly (rows of release_sessions, FINAL
     * collapsing a retried fact), users from the daily sketches.
     */
    async range(projectId: string, r: HealthRange): Promise<RangeFigures> {
      const args = {
        project: projectId,
        platform: r.platform ?? '',
        env: r.environment ?? '',
        from: utcDay(r.fromMs),
        to: utcDay(r.toMs),
      };
      const where = `project_id = {project:String}${onePlatform(r.platform)} AND day >= {from:Date} AND day < {to:Date}`;
      type Row = { d: string; v: string; p: string; noDay: number; noPlatform: number };
      // Sessions are counted exactly over every environment; one environment's figures come from its
      // daily sketches (release_sessions has no environment), exact to a few thousand sessions.
      const [exact, sketched] = await Promise.all([
        r.environment === undefined
          ? exactDays(projectId, r).then(groupingSets)
          : ch.query<Row & { s: number; cs: number }>(
              `SELECT toString(day) AS d, app_version AS v, platform AS p,
               uniqCombinedMerge(14)(sessions) AS s, uniqCombinedMerge(14)(crashed_sessions) AS cs,
               grouping(d) AS noDay, grouping(p) AS noPlatform
             FROM ${ENV_DAILY} WHERE ${where}${oneEnvironment(r.environment)} GROUP BY ${SETS}`,
              args,
            ),
        ch.query<Row & { u: number; cu: number }>(
          `SELECT toString(day) AS d, app_version AS v, platform AS p,
             uniqCombinedMerge(14)(users) AS u, uniqCombinedMerge(14)(crashed_users) AS cu,
             grouping(d) AS noDay, grouping(p) AS noPlatform
           FROM ${r.environment === undefined ? DAILY : ENV_DAILY} WHERE ${where}${oneEnvironment(r.environment)}
           GROUP BY ${SETS}`,
          args,
        ),
      ]);
      const users = new Map(sketched.map((x) => [setKey(x), x]));
      const out: RangeFigures = { totals: [], daily: [] };
      for (const x of exact) {
        const u = users.get(setKey(x));
        const c: ReleaseCounts = {
          appVersion: x.v,
          platform: Number(x.noPlatform) ? null : x.p,
          sessions: Number(x.s),
          crashedSessions: Number(x.cs),
          users: Number(u?.u ?? 0),
          crashedUsers: Number(u?.cu ?? 0),
        };
        if (c.sessions === 0) continue;
        if (Number(x.noDay)) out.totals.push(c);
        else out.daily.push({ day: x.d, ...c });
      }
      out.daily.sort(
        (a, b) =>
          a.day.localeCompare(b.day) ||
          a.appVersion.localeCompare(b.appVersion) ||
          (a.platform ?? '').localeCompare(b.platform ?? ''),
      );
      return out;
    },

    /** Sessions per release (key `platform\0version`) in the 24 h and the 7 days that end at `endMs` (adoption). */
    async adoption(
      projectId: string,
      endMs: number,
      platform?: string,
    ): Promise<{ day: Map<string, number>; week: Map<string, number> }> {
      const rows = await ch.query<{ v: string; p: string; s24: number; s7: number }>(
        `SELECT app_version AS v, platform AS p,
           uniqCombinedMergeIf(14)(sessions, hour >= toDateTime({dayFrom:UInt32}, 'UTC')) AS s24, uniqCombinedMerge(14)(sessions) AS s7
         FROM ${HOURLY}
         WHERE project_id = {project:String}${onePlatform(platform)}
           AND hour >= toDateTime({weekFrom:UInt32}, 'UTC') AND hour < toDateTime({end:UInt32}, 'UTC')
         GROUP BY v, p`,
        {
          project: projectId,
          platform: platform ?? '',
          dayFrom: sec(endMs - DAY_MS),
          weekFrom: sec(endMs - 7 * DAY_MS),
          end: sec(endMs),
        },
      );
      return {
        day: new Map(rows.map((x) => [key(x), Number(x.s24)])),
        week: new Map(rows.map((x) => [key(x), Number(x.s7)])),
      };
    },

    /**
     * The first and latest session start of each release (key `platform\0version`, and
     * `\u0001\0version` over all platforms), over all time, to the millisecond.
     */
    async seen(projectId: string, platform?: string): Promise<Map<string, { first: number; last: number }>> {
      const rows = await ch.query<{ v: string; p: string; f: string; l: string; noPlatform: number }>(
        `SELECT app_version AS v, platform AS p, toUnixTimestamp64Milli(min(first_at)) AS f,
           toUnixTimestamp64Milli(max(last_at)) AS l, grouping(p) AS noPlatform
         FROM ${SEEN} WHERE project_id = {project:String}${onePlatform(platform)} GROUP BY GROUPING SETS ((v, p), (v))`,
        { project: projectId, platform: platform ?? '' },
      );
      return new Map(
        rows.map((x) => [
          key({ v: x.v, p: Number(x.noPlatform) ? ALL : x.p }),
          { first: Number(x.f), last: Number(x.l) },
        ]),
      );
    },
  };
}

export type ReleaseHealthRepo = ReturnType<typeof releaseHealthRepo>;
