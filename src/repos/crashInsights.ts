import type { ClickHouse } from '../stores/clickhouse/port.ts';
import type { DimensionCounts } from '../domain/suspects.ts';
import type { RawStep, StepKind, TrailWindow } from '../domain/crashTrail.ts';
import { OCCURRENCES } from './crashOccurrences.ts';
import { DAY_MS, utcDay } from '../lib/time.ts';

/**
 * The crash page's suspects and trail (docs/decisions.md, "Crash suspects and the trail"), read
 * from the day-level states of clickhouse/009_crash_suspects.sql and, for the trail, the events
 * and network logs of a bounded sample of the group's latest occurrences.
 */

const SESSION_DIMS = 'session_dimensions_daily';
const CRASH_DIMS = 'crash_dimensions_daily';
const CRASH_PROJECT_DIMS = 'crash_dimensions_project_daily';

/**
 * Dimensions of the crash report (clickhouse/008_crash_context.sql): compared with the project's occurrences,
 * as tags exist only there and a session's environment is optional.
 */
const isCrashOnly = (dimension: string) => dimension === 'environment' || dimension.startsWith('tag:');

/** Values read per dimension on the group side (the most frequent); the rest cannot be ranked anyway. */
const VALUES_PER_DIMENSION = 50;

/** A (dimension, value) pair as one unambiguous string (the length of the dimension first), as the SQL spells it. */
const pairKey = (dimension: string, value: string) => `${Buffer.byteLength(dimension)}:${dimension}${value}`;

export interface SuspectCounts {
  /** the UTC days compared: those of the period on which the group occurred */
  days: string[];
  from: string | null;
  to: string | null;
  groupOccurrences: number;
  dimensions: DimensionCounts[];
}

export interface TrailQuery {
  windowSeconds: number;
  sample: number;
  rawSteps: number;
}

export function crashInsightsRepo(ch: ClickHouse) {
  return {
    /**
     * Per dimension, the group's occurrences and the project's sessions of each value, on the
     * days of the `periodDays` UTC days ending at the group's last occurrence on which the group
     * occurred. Three reads of pre-aggregated rows: the group's days, its values, their baseline.
     */
    async suspectCounts(projectId: string, groupKey: string, periodDays: number): Promise<SuspectCounts> {
      const one = { project: projectId, key: groupKey };
      const dayRows = await ch.query<{ day: string }>(
        `SELECT DISTINCT toString(day) AS day FROM ${CRASH_DIMS}
         WHERE project_id = {project:String} AND group_key = {key:String} AND dimension = ''
         ORDER BY day DESC LIMIT {cap:UInt32}`,
        { ...one, cap: periodDays },
      );
      const last = dayRows[0]?.day;
      if (!last) return { days: [], from: null, to: null, groupOccurrences: 0, dimensions: [] };
      const first = utcDay(Date.parse(`${last}T00:00:00Z`) - (periodDays - 1) * DAY_MS);
      const days = dayRows
        .map((r) => r.day)
        .filter((d) => d >= first)
        .sort();

      const group = await ch.query<{ dimension: string; value: string; n: number }>(
        `SELECT dimension, value, uniqCombinedMerge(14)(occurrences) AS n FROM ${CRASH_DIMS}
         WHERE project_id = {project:String} AND group_key = {key:String} AND day IN {days:Array(Date)}
         GROUP BY dimension, value ORDER BY dimension, value = '' DESC, n DESC, value LIMIT {per:UInt32} BY dimension`,
        { ...one, days, per: VALUES_PER_DIMENSION + 1 },
      );
      const wanted = group.filter((r) => r.dimension !== '' && r.value !== '');
      // Sessions carry release, platform, OS, device and network type; tags exist only on crash
      // reports and a session's environment is optional, so theirs is the project's occurrences.
      type CountRow = { dimension: string; value: string; n: number };
      const baselineOf = (table: string, unit: 'sessions' | 'occurrences', pairs: string[]) =>
        ch.query<CountRow>(
          `SELECT dimension, value, uniqCombinedMerge(14)(${unit}) AS n FROM ${table}
         WHERE project_id = {project:String} AND day IN {days:Array(Date)}
           AND (value = '' OR concat(toString(length(dimension)), ':', dimension, value) IN {pairs:Array(String)})
         GROUP BY dimension, value`,
          { project: projectId, days, pairs },
        );
      const crashOnly = wanted.filter((r) => isCrashOnly(r.dimension)).map((r) => pairKey(r.dimension, r.value));
      const ofSessions = wanted.filter((r) => !isCrashOnly(r.dimension)).map((r) => pairKey(r.dimension, r.value));
      const [sessionBaseline, crashBaseline] = await Promise.all([
        baselineOf(SESSION_DIMS, 'sessions', ofSessions),
        crashOnly.length ? baselineOf(CRASH_PROJECT_DIMS, 'occurrences', crashOnly) : Promise.resolve([]),
      ]);
      const baseline = [...sessionBaseline.filter((r) => !isCrashOnly(r.dimension)), ...crashBaseline];

      const byDim = new Map<string, DimensionCounts & { group: Map<string, number>; baseline: Map<string, number> }>();
      const dimOf = (name: string) => {
        let d = byDim.get(name);
        if (!d) {
          d = {
            dimension: name,
            baselineUnit: isCrashOnly(name) ? 'occurrences' : 'sessions',
            groupTotal: 0,
            baselineTotal: 0,
            group: new Map(),
            baseline: new Map(),
          };
          byDim.set(name, d);
        }
        return d;
      };
      let groupOccurrences = 0;
      for (const r of group) {
        if (r.dimension === '') {
          groupOccurrences = Number(r.n);
          continue;
        }
        const d = dimOf(r.dimension);
        if (r.value === '') d.groupTotal = Number(r.n);
        else d.group.set(r.value, Number(r.n));
      }
      for (const r of baseline) {
        const d = byDim.get(r.dimension);
        if (!d) continue;
        if (r.value === '') d.baselineTotal = Number(r.n);
        else d.baseline.set(r.value, Number(r.n));
      }
      return {
        days,
        from: days[0] ?? null,
        to: days[days.length - 1] ?? null,
        groupOccurrences,
        dimensions: [...byDim.values()],
      };
    },

    /**
     * The events of the `windowSeconds` before each of the group's latest `sample` occurrences
     * (at most `rawSteps` per occurrence, the latest): navigations, taps, custom events and failing
     * requests, in one query. The sample is read off the group's key range; the events by their
     * sessions (the events' sort key) and the failing requests by the sample's time span (the
     * network logs' sort key) and their session index. The sample orders on occurred_at alone (no
     * read of the long ids): a retried report not yet merged is the same (session, time) and is
     * grouped into its first copy below, its repeated steps collapsing as repeats do. GLOBAL IN:
     * on a cluster the sample is read once and its sessions sent to every shard (a plain IN over
     * two Distributed tables is refused); on one server it is an IN, its set used on the sort key.
     */
    async trailWindows(projectId: string, groupKey: string, q: TrailQuery): Promise<TrailWindow[]> {
      // (time, sequence, kind, text, method, status) per step
      type Step = [number, number, string, string, string, number | null];
      const rows = await ch.query<{ s: string; at: number; steps: Step[] }>(
        `WITH
           sample AS (
             SELECT session_id, occurred_at FROM ${OCCURRENCES}
             WHERE project_id = {project:String} AND group_key = {key:String}
             ORDER BY occurred_at DESC LIMIT {sample:UInt32}),
           -- the sample's time span, computed once: the months of events and the range of network logs read
           (SELECT (min(occurred_at) - toIntervalSecond({window:UInt32}), max(occurred_at)) FROM sample) AS span,
           steps AS (
             SELECT session_id, timestamp AS ts, sequence_number AS seq,
               multiIf(type = 'navigate', 'screen', type = 'tap', 'tap', 'event') AS kind,
               multiIf(type = 'navigate', nav_to, type = 'tap', ifNull(target, ''), name) AS text,
               '' AS method, CAST(NULL AS Nullable(Int32)) AS status
             FROM events
             WHERE project_id = {project:String} AND session_id GLOBAL IN (SELECT session_id FROM sample)
               AND type IN ('navigate', 'tap', 'custom')
               -- only the months of the sample are read (the events are partitioned by month)
               AND timestamp >= span.1 AND timestamp <= span.2
             UNION ALL
             SELECT session_id, timestamp AS ts, 0 AS seq, 'request' AS kind, url AS text, toString(method) AS method,
               status_code AS status
             FROM network_logs
             WHERE project_id = {project:String}
               AND timestamp >= span.1 AND timestamp <= span.2
               AND session_id GLOBAL IN (SELECT session_id FROM sample)
               AND (status_code IS NULL OR status_code >= 400 OR error IS NOT NULL))
         SELECT toString(o.session_id) AS s, toUnixTimestamp64Milli(o.occurred_at) AS at,
           arraySlice(arraySort(x -> (x.1, x.2), groupArrayIf(
             (toUnixTimestamp64Milli(e.ts), e.seq, e.kind, e.text, e.method, e.status),
             e.ts <= o.occurred_at AND e.ts >= o.occurred_at - toIntervalSecond({window:UInt32}))), -{raw:UInt32})
             AS steps
         FROM sample AS o LEFT JOIN steps AS e ON e.session_id = o.session_id
         GROUP BY o.session_id, o.occurred_at`,
        { project: projectId, key: groupKey, sample: q.sample, window: q.windowSeconds, raw: q.rawSteps },
      );
      return rows.map((r) => ({
        sessionId: r.s,
        occurredAt: Number(r.at),
        steps: r.steps.map(
          ([, , kind, text, method, status]): RawStep => ({
            kind: kind as StepKind,
            text,
            method,
            status: status === null ? null : Number(status),
          }),
        ),
      }));
    },
  };
}

export type CrashInsightsRepo = ReturnType<typeof crashInsightsRepo>;
