import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { InsertBatcher, type QueueBudget } from '../stores/clickhouse/batcher.ts';
import { isoMs } from '../lib/time.ts';
import { pageEnvelope } from '../domain/paging.ts';
import type { Breadcrumb, DroppedField } from '../domain/crashContext.ts';
import {
  aliasParams,
  canonical,
  aliasesOf,
  type KeyAliases,
  ONE_GROUP,
  type OccurrenceScope,
  scopeOf,
} from './occurrenceScope.ts';
import { crashGroupState, type StateDimension } from './crashGroupState.ts';
import { factsByKey, type FactsRow, type OccurrenceFacts } from './occurrenceFacts.ts';

export type { KeyAliases, OccurrenceFacts, OccurrenceScope };

/**
 * ClickHouse `crash_occurrences`: every occurrence of every group, append-only, keyed by the
 * occurrence's identity (a retried report is the same row). A group's counters and latest
 * context are aggregated from it at read; no Postgres row is written per occurrence.
 */
export const OCCURRENCES = 'crash_occurrences';

// Crash reports are few next to events; a storm still shares one insert per round trip.
const OCCURRENCE_BATCH = { maxBatchRows: 10_000, maxQueuedRows: 100_000, maxConcurrent: 1 };

/** One occurrence row as stored. */
export interface OccurrenceRow {
  project_id: string;
  group_key: string;
  id: string;
  occurred_at: string;
  session_id: string;
  user_id: string | null;
  device_fingerprint: string;
  platform: string | null;
  os_version: string | null;
  app_version: string | null;
  brand: string | null;
  model: string | null;
  message: string;
  stack_trace: string;
  is_fatal: boolean;
  handled: boolean;
  /** the stack as the release's artifacts read it at record time ('' or absent: none) */
  symbolicated_stack?: string;
  /** the session's network type (crash suspects, clickhouse/009_crash_suspects.sql) */
  network_type?: string | null;
  /** The crash context (clickhouse/008_crash_context.sql); absent on rows copied from the old layout. */
  environment?: string;
  level?: string;
  tags?: Record<string, string>;
  /** JSON text ('' when none) */
  context?: string;
  breadcrumbs?: string;
  dropped?: string;
}

/** DateTime64 text as ClickHouse reads it in the column's time zone (UTC). */
export const chTime = (ms: number) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');

/** One occurrence as a person investigating the crash reads it, with the session to open. */
export interface CrashOccurrence {
  occurredAt: string;
  sessionId: string;
  userId: string | null;
  appVersion: string | null;
  platform: string | null;
  osVersion: string | null;
  brand: string | null;
  model: string | null;
  isFatal: boolean;
  message: string | null;
  level: string;
  /** '' when the report sent none */
  environment: string;
}

/** What the crash page adds to the group: who it hit, in which versions, the latest trace. */
export interface CrashGroupFacts {
  usersAffected: number;
  appVersionCounts: { appVersion: string | null; occurrences: number }[];
  /**
   * The latest occurrence. Occurrences moved from the Postgres layout before 006_crash_facts.sql
   * without a whole trace of their own carry their group's stack head.
   */
  latest:
    | (CrashOccurrence & { stackTrace: string | null; symbolicatedStack: string | null; handled: boolean | null })
    | null;
}

/** One value of a breakdown of a group's occurrences (a model, an OS version, an app version, a platform). */
export interface BreakdownRow {
  value: string | null;
  occurrences: number;
  devices: number;
}

/** Who a group hit, by device model, OS, app version and platform: most devices first, at most 20 each. */
export interface CrashBreakdown {
  platforms: BreakdownRow[];
  models: BreakdownRow[];
  osVersions: BreakdownRow[];
  appVersions: BreakdownRow[];
}

/** The state's dimensions (repos/crashGroupState.ts) as the breakdown names them. */
const BREAKDOWN: Record<StateDimension, keyof CrashBreakdown> = {
  platform: 'platforms',
  deviceModel: 'models',
  osVersion: 'osVersions',
  release: 'appVersions',
};

/** An occurrence of a session, on its timeline. */
export interface SessionOccurrence {
  at: number;
  isFatal: boolean;
  groupKey: string;
}

interface OccurrenceReadRow {
  at: number;
  session_id: string;
  user_id: string | null;
  app_version: string | null;
  platform: string | null;
  os_version: string | null;
  brand: string | null;
  model: string | null;
  is_fatal: boolean | number;
  message: string;
  level: string;
  environment: string;
}

const OCCURRENCE_READ = `toUnixTimestamp64Milli(occurred_at) AS at, toString(session_id) AS session_id, user_id, app_version,
  platform, os_version, brand, model, is_fatal, message, level, environment`;

const toOccurrence = (r: OccurrenceReadRow): CrashOccurrence => ({
  occurredAt: isoMs(Number(r.at)),
  sessionId: r.session_id,
  userId: r.user_id,
  appVersion: r.app_version,
  platform: r.platform,
  osVersion: r.os_version,
  brand: r.brand,
  model: r.model,
  isFatal: Boolean(r.is_fatal),
  message: r.message,
  level: r.level,
  environment: r.environment,
});

type LatestRow = OccurrenceReadRow & { stack_trace: string; symbolicated_stack: string; handled: boolean | number };

const toLatest = (l: LatestRow): NonNullable<CrashGroupFacts['latest']> => ({
  ...toOccurrence(l),
  stackTrace: l.stack_trace,
  symbolicatedStack: l.symbolicated_stack || null,
  handled: Boolean(l.handled),
});

interface DetailRow {
  id: string;
  stack_trace: string;
  symbolicated_stack: string;
  handled: boolean | number;
  tags: Record<string, string>;
  context: string;
  breadcrumbs: string;
  dropped: string;
}

/** One occurrence whole: the crash page's picker shows one at a time. */
export interface OccurrenceDetail extends CrashOccurrence {
  id: string;
  stackTrace: string;
  symbolicatedStack: string | null;
  handled: boolean;
  tags: Record<string, string>;
  /** the context object (null when none was kept) */
  context: Record<string, unknown> | null;
  breadcrumbs: Breadcrumb[];
  dropped: DroppedField[];
}

const jsonOr = <T>(text: string, empty: T): T => {
  if (text === '') return empty;
  try {
    return JSON.parse(text) as T;
  } catch {
    return empty;
  }
};

const toDetail = (r: OccurrenceReadRow & DetailRow): OccurrenceDetail => ({
  ...toOccurrence(r),
  id: r.id,
  stackTrace: r.stack_trace,
  symbolicatedStack: r.symbolicated_stack || null,
  handled: Boolean(r.handled),
  tags: r.tags,
  context: jsonOr<Record<string, unknown> | null>(r.context, null),
  breadcrumbs: jsonOr<Breadcrumb[]>(r.breadcrumbs, []),
  dropped: jsonOr<DroppedField[]>(r.dropped, []),
});

/** A (group key, occurrence id) pair as `hasMany`'s answer holds it. */
export const storedPair = (groupKey: string, id: string) => `${groupKey}\u0000${id}`;

export function crashOccurrencesRepo(ch: ClickHouse, budget: QueueBudget) {
  const writer = new InsertBatcher(ch, OCCURRENCES, budget, OCCURRENCE_BATCH);
  const state = crashGroupState(ch);

  /**
   * The occurrences' aggregate per group, for the given groups of one project: each group is
   * its keys, the first (its own) naming it in the answer; with `only`, of the occurrences of
   * those levels / that environment (a group with none has no entry). Read from the crash
   * page's state (repos/crashGroupState.ts), or from the occurrences with a tag scope.
   */
  function factsOf(
    projectId: string,
    groups: string[][],
    only: OccurrenceScope = {},
  ): Promise<Map<string, OccurrenceFacts>> {
    return only.tag === undefined ? state.facts(projectId, groups, only) : factsOfOccurrences(projectId, groups, only);
  }

  async function factsOfOccurrences(
    projectId: string,
    groups: string[][],
    only: OccurrenceScope = {},
  ): Promise<Map<string, OccurrenceFacts>> {
    if (groups.length === 0) return new Map();
    const scope = scopeOf(only);
    const aliases = aliasesOf(groups);
    // uniqExact(id), not count(): a retried report is a second physical row until a merge.
    // Duplicates are identical rows, so min, max and argMax need no FINAL.
    const rows = await ch.query<FactsRow>(
      `SELECT ${canonical(aliases)} AS k, uniqExact(id) AS n, uniqExact(device_fingerprint) AS d, uniqExact(user_id) AS u,
         toUnixTimestamp64Milli(min(occurred_at)) AS first, toUnixTimestamp64Milli(max(occurred_at)) AS last,
         argMax(tuple(platform, app_version, os_version), (occurred_at, id)) AS latest,
         max(is_fatal) AS fatal, min(handled) AS handled, arraySort(groupUniqArray(app_version)) AS versions,
         arraySort(groupUniqArray(platform)) AS platforms, groupUniqArray(level) AS levels
       FROM ${OCCURRENCES}
       WHERE project_id = {project:String} AND group_key IN {keys:Array(String)}${scope.where}
       GROUP BY k`,
      { project: projectId, keys: groups.flat(), ...aliasParams(aliases), ...scope.params },
    );
    return factsByKey(rows);
  }

  /** The breakdown read from the occurrences: one pass over the group's rows (GROUPING SETS). */
  function breakdownOfOccurrences(projectId: string, keys: string[], only: OccurrenceScope) {
    const scope = scopeOf(only);
    return ch.query<{ v: string | null; n: number; d: number; dim: string }>(
      `SELECT multiIf(grouping(p) = 0, 'platforms', grouping(m) = 0, 'models', grouping(o) = 0, 'osVersions', 'appVersions') AS dim,
         multiIf(grouping(p) = 0, p, grouping(m) = 0, m, grouping(o) = 0, o, v0) AS v,
         uniqExact(id) AS n, uniqExact(device_fingerprint) AS d
       FROM (
         SELECT id, device_fingerprint, platform AS p,
           -- brand and model as a person names the device ("Apple iPhone15,2"); null when neither was sent
           nullIf(trim(concat(ifNull(brand, ''), ' ', ifNull(model, ''))), '') AS m,
           if(isNull(platform) AND isNull(os_version), NULL, trim(concat(ifNull(platform, ''), ' ', ifNull(os_version, '')))) AS o,
           app_version AS v0
         FROM ${OCCURRENCES} WHERE ${ONE_GROUP}${scope.where})
       GROUP BY GROUPING SETS ((p), (m), (o), (v0))`,
      { project: projectId, keys, ...scope.params },
    );
  }

  /** pageFacts read from the occurrences themselves (a tag scope, which the state does not hold). */
  async function pageFactsOfOccurrences(projectId: string, keys: string[], only: OccurrenceScope) {
    const scope = scopeOf(only);
    const params = { project: projectId, keys, ...scope.params };
    const inGroup = ONE_GROUP + scope.where;
    const [agg] = await ch.query<{ u: number }>(
      `SELECT uniqExact(user_id) AS u FROM ${OCCURRENCES} WHERE ${inGroup}`,
      params,
    );
    const versions = await ch.query<{ v: string | null; n: number }>(
      `SELECT app_version AS v, uniqExact(id) AS n FROM ${OCCURRENCES} WHERE ${inGroup}
       GROUP BY app_version ORDER BY n DESC, v LIMIT 100`,
      params,
    );
    const [l] = await ch.query<LatestRow>(
      `SELECT ${OCCURRENCE_READ}, stack_trace, symbolicated_stack, handled FROM ${OCCURRENCES} WHERE ${inGroup}
       ORDER BY occurred_at DESC, id LIMIT 1`,
      params,
    );
    return {
      usersAffected: Number(agg?.u ?? 0),
      appVersionCounts: versions.map((v) => ({ appVersion: v.v, occurrences: Number(v.n) })),
      latest: l ? toLatest(l) : null,
    };
  }

  return {
    /** Resolves once the row is committed (group commit; a retried report is the same row). */
    add: (row: OccurrenceRow) => writer.add(Buffer.from(`${JSON.stringify(row)}\n`), 1),
    /** A batch's rows through the group commit at once: one insert however many (resolves once committed). */
    addMany: (rows: OccurrenceRow[]) =>
      rows.length === 0
        ? Promise.resolve()
        : writer.add(Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join('')), rows.length),

    /** Which of these (group key, occurrence id) pairs of a project are stored (one read for a batch). */
    async hasMany(projectId: string, pairs: { groupKey: string; id: string }[]): Promise<Set<string>> {
      if (pairs.length === 0) return new Set();
      const r = await ch.query<{ g: string; id: string }>(
        `SELECT DISTINCT group_key AS g, id FROM ${OCCURRENCES}
         WHERE project_id = {p:String} AND group_key IN {gs:Array(String)} AND id IN {ids:Array(String)}`,
        { p: projectId, gs: [...new Set(pairs.map((x) => x.groupKey))], ids: [...new Set(pairs.map((x) => x.id))] },
      );
      return new Set(r.map((x) => storedPair(x.g, x.id)));
    },

    /** Whether this occurrence is stored under this group key (a primary-key lookup). */
    async has(projectId: string, groupKey: string, id: string): Promise<boolean> {
      const r = await ch.query<{ n: number }>(
        `SELECT count() AS n FROM ${OCCURRENCES} WHERE project_id = {p:String} AND group_key = {g:String} AND id = {id:String}`,
        { p: projectId, g: groupKey, id },
      );
      return Number(r[0]?.n ?? 0) > 0;
    },
    /** Rows copied in bulk (the one-off move of the old layout): one insert, no batcher. */
    insertMany: (rows: OccurrenceRow[]) => ch.insert(OCCURRENCES, rows),
    /** Resolves once every occurrence accepted so far is written (shutdown, tests). */
    drain: () => writer.drain(),
    /** The table's group commit (its queue and inserts are measured). */
    batcher: writer,

    factsOf,

    /** The app versions a group has had so far: what resolving it snapshots. */
    async versionsOf(projectId: string, keys: string[]): Promise<string[]> {
      const [key] = keys;
      return key === undefined ? [] : ((await factsOf(projectId, [keys])).get(key)?.versions ?? []);
    },

    /** The crash page's facts of one group: distinct users, occurrences per app version, the latest occurrence whole. */
    async pageFacts(projectId: string, keys: string[], only: OccurrenceScope = {}): Promise<CrashGroupFacts> {
      if (only.tag !== undefined) return pageFactsOfOccurrences(projectId, keys, only);
      const [agg, versions] = await Promise.all([
        state.usersAndLatest(projectId, keys, only),
        state.dimensions(projectId, keys, ['release'], only),
      ]);
      // The latest occurrence by its key (a primary-key read), of the scope the state chose it in.
      const [l] =
        agg.latestId === null
          ? []
          : await ch.query<LatestRow>(
              `SELECT ${OCCURRENCE_READ}, stack_trace, symbolicated_stack, handled FROM ${OCCURRENCES}
               WHERE ${ONE_GROUP} AND id = {id:String} LIMIT 1`,
              { project: projectId, keys, id: agg.latestId },
            );
      return {
        usersAffected: agg.users,
        appVersionCounts: versions
          .sort(
            (x, y) =>
              y.occurrences - x.occurrences ||
              (x.value === y.value ? 0 : x.value === null ? 1 : y.value === null ? -1 : x.value < y.value ? -1 : 1),
          )
          .slice(0, 100)
          .map((v) => ({ appVersion: v.value, occurrences: v.occurrences })),
        latest: l ? toLatest(l) : null,
      };
    },

    /**
     * The `index`-th occurrence of a group, newest first (0: the latest), whole, with its crash
     * context; and how many there are (of the environment, when one is given).
     */
    async occurrenceAt(
      projectId: string,
      keys: string[],
      index: number,
      only: OccurrenceScope = {},
    ): Promise<{ total: number; occurrence: OccurrenceDetail | null }> {
      const scope = scopeOf(only);
      const params = { project: projectId, keys, offset: index, ...scope.params };
      const [total] = await ch.query<{ n: number }>(
        `SELECT uniqExact(id) AS n FROM ${OCCURRENCES} WHERE ${ONE_GROUP}${scope.where}`,
        params,
      );
      const [r] = await ch.query<OccurrenceReadRow & DetailRow>(
        `SELECT ${OCCURRENCE_READ}, id, stack_trace, symbolicated_stack, handled, tags, context, breadcrumbs, dropped
         FROM ${OCCURRENCES} FINAL WHERE ${ONE_GROUP}${scope.where}
         ORDER BY occurred_at DESC, id LIMIT 1 OFFSET {offset:UInt64}`,
        params,
      );
      return { total: Number(total?.n ?? 0), occurrence: r ? toDetail(r) : null };
    },

    /** Of these group keys, those with no occurrence readable yet. */
    async withoutOccurrences(projectId: string, groupKeys: string[]): Promise<Set<string>> {
      if (groupKeys.length === 0) return new Set();
      const rows = await ch.query<{ k: string }>(
        `SELECT DISTINCT group_key AS k FROM ${OCCURRENCES}
         WHERE project_id = {project:String} AND group_key IN {keys:Array(String)}`,
        { project: projectId, keys: groupKeys },
      );
      const seen = new Set(rows.map((r) => r.k));
      return new Set(groupKeys.filter((k) => !seen.has(k)));
    },

    /** The environments of a group's occurrences, most occurrences first (at most 50). */
    environments: (projectId: string, keys: string[]) => state.environments(projectId, keys),

    /**
     * The group's occurrences broken down by platform, device model, OS and app version
     * (occurrences and devices of each; most devices first, 20 each), from the crash page's state:
     * a group of 1M occurrences read from its rows took most of its page's second. A tag scope
     * reads the occurrences (one pass, GROUPING SETS).
     */
    async breakdown(projectId: string, keys: string[], only: OccurrenceScope = {}): Promise<CrashBreakdown> {
      type Row = { v: string | null; n: number; d: number; dim: string };
      const rows: Row[] =
        only.tag === undefined
          ? (await state.dimensions(projectId, keys, Object.keys(BREAKDOWN) as StateDimension[], only)).map((r) => ({
              dim: BREAKDOWN[r.dimension],
              v: r.value,
              n: r.occurrences,
              d: r.devices,
            }))
          : await breakdownOfOccurrences(projectId, keys, only);
      // ORDER BY d DESC, n DESC, v (nulls last), LIMIT 20: as each dimension's own query had it
      const top = (dim: keyof CrashBreakdown): BreakdownRow[] =>
        rows
          .filter((r) => r.dim === dim)
          .map((r) => ({ value: r.v, occurrences: Number(r.n), devices: Number(r.d) }))
          .sort(
            (x, y) =>
              y.devices - x.devices ||
              y.occurrences - x.occurrences ||
              (x.value === y.value ? 0 : x.value === null ? 1 : y.value === null ? -1 : x.value < y.value ? -1 : 1),
          )
          .slice(0, 20);
      return {
        platforms: top('platforms'),
        models: top('models'),
        osVersions: top('osVersions'),
        appVersions: top('appVersions'),
      };
    },

    /** A group's occurrences, newest first, each with the session it happened in. */
    async page(projectId: string, keys: string[], page: number, limit: number, only: OccurrenceScope = {}) {
      const scope = scopeOf(only);
      const params = { project: projectId, keys, limit, offset: (page - 1) * limit, ...scope.params };
      const [total] = await ch.query<{ n: number }>(
        `SELECT uniqExact(id) AS n FROM ${OCCURRENCES} WHERE ${ONE_GROUP}${scope.where}`,
        params,
      );
      // FINAL: a retried report is one occurrence in the list, as in the count.
      const rows = await ch.query<OccurrenceReadRow>(
        `SELECT ${OCCURRENCE_READ} FROM ${OCCURRENCES} FINAL WHERE ${ONE_GROUP}${scope.where}
         ORDER BY occurred_at DESC, id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
        params,
      );
      return pageEnvelope(rows.map(toOccurrence), Number(total?.n ?? 0), page, limit);
    },

    /**
     * Groups new in each release: per (group, platform), the app version of its earliest
     * occurrence there, counted per (version, platform). Unknown version or platform is ''.
     */
    async newGroupsByRelease(
      projectId: string,
      aliases?: KeyAliases,
    ): Promise<{ appVersion: string; platform: string; groups: number }[]> {
      const rows = await ch.query<{ v: string; p: string; n: number }>(
        // Messages (info, warning) are no crash: a group of messages is not a new crash group.
        `SELECT v, p, count() AS n FROM (
           SELECT ${canonical(aliases)} AS g, ifNull(platform, '') AS p, argMin(ifNull(app_version, ''), (occurred_at, id)) AS v
           FROM ${OCCURRENCES} WHERE project_id = {project:String} AND level NOT IN ('warning', 'info')
           GROUP BY g, p)
         GROUP BY v, p`,
        { project: projectId, ...aliasParams(aliases) },
      );
      return rows.map((r) => ({ appVersion: r.v, platform: r.p, groups: Number(r.n) }));
    },

    /** A group's occurrences and distinct users per bucket (ms starts) from `fromMs`, and its first and last release. */
    async activity(projectId: string, keys: string[], fromMs: number, bucketMs: number) {
      const params = { project: projectId, keys, from: fromMs, bucket: Math.round(bucketMs / 1000) };
      const rows = await ch.query<{ b: number; n: number; u: number }>(
        `SELECT toUnixTimestamp(toStartOfInterval(occurred_at, toIntervalSecond({bucket:UInt32}))) * 1000 AS b,
           uniqExact(id) AS n, uniqExact(user_id) AS u
         FROM ${OCCURRENCES} WHERE ${ONE_GROUP} AND occurred_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') GROUP BY b ORDER BY b`,
        params,
      );
      const [span] = await ch.query<{ first: string | null; last: string | null }>(
        `SELECT argMin(app_version, (occurred_at, id)) AS first, argMax(app_version, (occurred_at, id)) AS last FROM ${OCCURRENCES} WHERE ${ONE_GROUP}`,
        params,
      );
      return {
        buckets: new Map(rows.map((r) => [Number(r.b), { occurrences: Number(r.n), users: Number(r.u) }])),
        firstRelease: span?.first ?? null,
        lastRelease: span?.last ?? null,
      };
    },

    /** A session's occurrences in time order. */
    async ofSession(projectId: string, sessionId: string): Promise<SessionOccurrence[]> {
      const rows = await ch.query<{ at: number; fatal: boolean | number; k: string }>(
        `SELECT toUnixTimestamp64Milli(occurred_at) AS at, is_fatal AS fatal, group_key AS k FROM ${OCCURRENCES} FINAL
         WHERE project_id = {project:String} AND session_id = {session:UUID} ORDER BY occurred_at, id`,
        { project: projectId, session: sessionId },
      );
      return rows.map((r) => ({ at: Number(r.at), isFatal: Boolean(r.fatal), groupKey: r.k }));
    },
  };
}

export type CrashOccurrencesRepo = ReturnType<typeof crashOccurrencesRepo>;

/**
 * Groups of a project with at least `min` occurrences since `sinceMs` (a spike rule's pass).
 * Bounded by the project's groups; uniqExact(id) because a retried report is a second row until a merge.
 */
export async function busyGroups(
  ch: ClickHouse,
  projectId: string,
  sinceMs: number,
  min: number,
  levels: readonly string[],
  aliases?: KeyAliases,
): Promise<{ groupKey: string; occurrences: number }[]> {
  // A merged group's occurrences count with the kept group's (its own key names it).
  const rows = await ch.query<{ k: string; n: number }>(
    `SELECT ${canonical(aliases)} AS k, uniqExact(id) AS n FROM ${OCCURRENCES}
     WHERE project_id = {project:String} AND occurred_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
       AND level IN {levels:Array(String)}
     GROUP BY k HAVING n >= {min:UInt64}`,
    {
      project: projectId,
      since: sinceMs,
      min: Math.max(0, Math.ceil(min)),
      levels: [...levels],
      ...aliasParams(aliases),
    },
  );
  return rows.map((r) => ({ groupKey: r.k, occurrences: Number(r.n) }));
}
