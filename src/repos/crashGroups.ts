import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { InsertBatcher, type QueueBudget } from '../stores/clickhouse/batcher.ts';
import { crashGroupKey, crashOccurrenceId, stackHead, type CrashPayload } from '../domain/crashGrouping.ts';
import { canTransition, statusAfterOccurrence, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import { isoMs, isoTime } from '../domain/time.ts';
import { pageEnvelope } from '../domain/paging.ts';
import { sessionQueries } from './sessions.ts';
import { enqueueJob, NEW_GROUP_JOB } from './outbox.ts';
import { pgResource, PG_NOW_MS } from './exportCore/postgres.ts';
import type { ParquetColumn } from './exportCore/parquet.ts';
import type { ChangeFilter } from './exportCore/types.ts';

/**
 * The crash-group aggregate. Postgres `crash_groups` holds each group's identity (created by its
 * first occurrence), its workflow and the first-occurrence decision; ClickHouse
 * `crash_occurrences` holds every occurrence, append-only, and the group's counters and latest
 * context are aggregated from it at read. No Postgres row is written per occurrence: a storm of
 * one crash must not queue on the group's row lock (docs/decisions.md, Crashes).
 */
const GROUPS = 'crash_groups';
/** In ClickHouse. */
const OCCURRENCES = 'crash_occurrences';
/** Postgres tables of the layout before 006_crash_facts.sql, until start-up has copied them. */
const LEGACY_OCCURRENCES = 'crash_occurrences_legacy';
const LEGACY_DEVICES = 'crash_group_devices_legacy';

// Crash reports are few next to events; a storm still shares one insert per round trip.
const OCCURRENCE_BATCH = { maxBatchRows: 10_000, maxQueuedRows: 100_000, maxConcurrent: 1 };

export type RecordCrashResult =
  | { outcome: 'no-session' }
  | { outcome: 'recorded'; groupId: string; newGroup: boolean };

/** The one read model of a crash group; the management API and the dashboard each present it. */
export interface CrashGroup {
  id: string;
  message: string;
  status: CrashGroupStatus;
  isFatal: boolean;
  handled: boolean;
  occurrenceCount: number;
  affectedDevices: number;
  platform: string | null;
  appVersion: string | null;
  osVersion: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
  /** The latest of its creation, a status or summary change, and its latest occurrence's recording (server clock). */
  updatedAt: string;
  stackHead: string;
  summary: string | null;
  summarySource: string | null;
  /** When the summary was written (null before it was, and for summaries older than the column). */
  summaryAt: string | null;
  appVersions: string[];
  resolvedVersions: string[];
}

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
}

/** What the crash page adds to the group: who it hit, in which versions, the latest trace. */
export interface CrashGroupFacts {
  usersAffected: number;
  appVersionCounts: { appVersion: string | null; occurrences: number }[];
  /**
   * The latest occurrence. Occurrences moved from the Postgres layout before 006_crash_facts.sql
   * without a whole trace of their own carry their group's stack head.
   */
  latest: (CrashOccurrence & { stackTrace: string | null; handled: boolean | null }) | null;
}

/** An occurrence as read back from ClickHouse for the crash page. */
interface OccurrenceReadRow {
  at: number; session_id: string; user_id: string | null; app_version: string | null; platform: string | null;
  os_version: string | null; brand: string | null; model: string | null; is_fatal: boolean | number; message: string;
}

const OCCURRENCE_READ = `toUnixTimestamp64Milli(occurred_at) AS at, toString(session_id) AS session_id, user_id, app_version,
  platform, os_version, brand, model, is_fatal, message`;

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
});

/** What Postgres holds of a group: identity, workflow, and the context of its first occurrence. */
interface GroupRow {
  id: string; group_key: string; message: string; status: CrashGroupStatus; is_fatal: boolean; handled: boolean;
  platform: string | null; app_version: string | null; os_version: string | null; first_seen_at: number;
  updated_at: number; stack_head: string; summary: string | null; summary_source: string | null; summary_at: Date | string | null;
  resolved_versions: string[];
}

const COLUMNS =
  'id, group_key, message, status, is_fatal, handled, platform, app_version, os_version, first_seen_at, updated_at, stack_head, summary, summary_source, summary_at, resolved_versions';

/** A group's aggregate over its occurrences in ClickHouse. */
interface Facts {
  occurrences: number;
  devices: number;
  /** distinct user ids (occurrences without one do not count) */
  users: number;
  firstSeen: number;
  lastSeen: number;
  /** platform, appVersion, osVersion of the latest occurrence */
  latest: [string | null, string | null, string | null];
  isFatal: boolean;
  handled: boolean;
  versions: string[];
}

/**
 * The merge of both stores. A group whose first occurrence is being written (its Postgres row
 * committed a moment before the ClickHouse block is readable, or the other way round on a
 * retry) shows the first occurrence's own values rather than zeros.
 */
function toGroup(r: GroupRow, f: Facts | undefined): CrashGroup {
  return {
    id: r.id,
    message: r.message,
    status: r.status,
    isFatal: f ? f.isFatal : r.is_fatal,
    handled: f ? f.handled : r.handled,
    occurrenceCount: f ? f.occurrences : 1,
    affectedDevices: f ? f.devices : 1,
    platform: f ? f.latest[0] : r.platform,
    appVersion: f ? f.latest[1] : r.app_version,
    osVersion: f ? f.latest[2] : r.os_version,
    firstSeenAt: isoMs(Math.min(Number(r.first_seen_at), f?.firstSeen ?? Infinity)),
    lastSeenAt: isoMs(f ? f.lastSeen : r.first_seen_at),
    updatedAt: isoMs(r.updated_at),
    stackHead: r.stack_head,
    summary: r.summary,
    summarySource: r.summary_source,
    summaryAt: isoTime(r.summary_at),
    appVersions: f ? f.versions : r.app_version === null ? [] : [r.app_version],
    resolvedVersions: r.resolved_versions,
  };
}

export const CRASH_FIELDS = [
  'id', 'message', 'status', 'isFatal', 'handled', 'occurrenceCount', 'affectedDevices',
  'platform', 'appVersion', 'osVersion', 'firstSeenAt', 'lastSeenAt', 'updatedAt',
] as const;

const CRASH_PARQUET: ParquetColumn[] = [
  { name: 'id', type: 'string', nullable: false },
  { name: 'message', type: 'string', nullable: false },
  { name: 'status', type: 'string', nullable: false },
  { name: 'isFatal', type: 'boolean', nullable: false },
  { name: 'handled', type: 'boolean', nullable: false },
  { name: 'occurrenceCount', type: 'int64', nullable: false },
  { name: 'affectedDevices', type: 'int64', nullable: false },
  { name: 'platform', type: 'string', nullable: true },
  { name: 'appVersion', type: 'string', nullable: true },
  { name: 'osVersion', type: 'string', nullable: true },
  { name: 'firstSeenAt', type: 'timestamp', nullable: false },
  { name: 'lastSeenAt', type: 'timestamp', nullable: false },
  { name: 'updatedAt', type: 'timestamp', nullable: false },
];

/**
 * A group's updatedAt is the latest of its creation, its status or summary change, and the
 * time (server clock) its latest occurrence was recorded: new occurrences change the counters.
 * Not lastSeenAt itself: that is the device's clock, and a late report of an old crash changes
 * occurrenceCount without moving it (docs/decisions.md, "Incremental exports"). Occurrences
 * write no Postgres row each: they mark their group, and the marks are stamped together at
 * most once per EXPORT_TOUCH_INTERVAL_MS (services/index.ts), after the occurrence committed.
 */
const STAMP = `updated_at = ${PG_NOW_MS}`;

/** The contract's crash-group fields (the export row), in the contract's order. */
const exportFields = (g: CrashGroup) => Object.fromEntries(CRASH_FIELDS.map((k) => [k, g[k]]));

export type SetStatusResult = { outcome: 'not-found' } | { outcome: 'ok'; group: CrashGroup };

/** What an alert needs of the group, and the session of its first occurrence. */
export interface AlertFacts {
  groupId: string;
  projectId: string;
  message: string;
  stackHead: string;
  isFatal: boolean;
  handled: boolean;
  firstSeenAt: number;
  summary: string | null;
  summarySource: string | null;
  platform: string | null;
  appVersion: string | null;
  osVersion: string | null;
  firstSessionId: string | null;
}

/** DateTime64 text as ClickHouse reads it in the column's time zone (UTC). */
const chTime = (ms: number) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');

/** One occurrence row of ClickHouse `crash_occurrences`. */
interface OccurrenceRow {
  project_id: string; group_key: string; id: string; occurred_at: string; session_id: string;
  user_id: string | null; device_fingerprint: string; platform: string | null; os_version: string | null;
  app_version: string | null; brand: string | null; model: string | null;
  message: string; stack_trace: string; is_fatal: boolean; handled: boolean;
}

/** The occurrences' aggregate per group, for the given groups of one project. */
async function factsOf(ch: ClickHouse, projectId: string, groupKeys: string[]): Promise<Map<string, Facts>> {
  if (groupKeys.length === 0) return new Map();
  // uniqExact(id), not count(): a retried report is a second physical row until a merge.
  // Duplicates are identical rows, so min, max and argMax need no FINAL.
  const rows = await ch.query<{
    k: string; n: number; d: number; u: number; first: number; last: number; latest: [string | null, string | null, string | null];
    fatal: boolean | number; handled: boolean | number; versions: string[];
  }>(
    `SELECT group_key AS k, uniqExact(id) AS n, uniqExact(device_fingerprint) AS d, uniqExact(user_id) AS u,
       toUnixTimestamp64Milli(min(occurred_at)) AS first, toUnixTimestamp64Milli(max(occurred_at)) AS last,
       argMax(tuple(platform, app_version, os_version), (occurred_at, id)) AS latest,
       max(is_fatal) AS fatal, min(handled) AS handled, arraySort(groupUniqArray(app_version)) AS versions
     FROM ${OCCURRENCES}
     WHERE project_id = {project:String} AND group_key IN {keys:Array(String)}
     GROUP BY group_key`,
    { project: projectId, keys: groupKeys },
  );
  return new Map(rows.map((r) => [r.k, {
    occurrences: Number(r.n), devices: Number(r.d), users: Number(r.u), firstSeen: Number(r.first), lastSeen: Number(r.last),
    latest: r.latest, isFatal: Boolean(r.fatal), handled: Boolean(r.handled), versions: r.versions,
  }]));
}

/** The app versions a group has had so far: what resolving it snapshots. */
async function versionsOf(ch: ClickHouse, projectId: string, groupKey: string): Promise<string[]> {
  const f = await factsOf(ch, projectId, [groupKey]);
  return f.get(groupKey)?.versions ?? [];
}

/** The alert's reads and its one write: Postgres only, so the worker process (no ClickHouse) can use them. */
export function crashGroupAlerts(db: Postgres) {
  return {
    /** The group (any project: the outbox job names it by id) and its first occurrence's session. */
    async alertFacts(groupId: string): Promise<AlertFacts | null> {
      const r = await db.query<{
        id: string; project_id: string; message: string; stack_head: string; is_fatal: boolean; handled: boolean;
        first_seen_at: number; summary: string | null; summary_source: string | null; platform: string | null;
        app_version: string | null; os_version: string | null; first_session_id: string | null;
      }>(
        `SELECT id, project_id, message, stack_head, is_fatal, handled, first_seen_at, summary, summary_source,
                platform, app_version, os_version, first_session_id
         FROM ${GROUPS} WHERE id = $1`,
        [groupId],
      );
      const x = r.rows[0];
      if (!x) return null;
      return {
        groupId: x.id, projectId: x.project_id, message: x.message, stackHead: x.stack_head, isFatal: x.is_fatal,
        handled: x.handled, firstSeenAt: Number(x.first_seen_at), summary: x.summary, summarySource: x.summary_source,
        platform: x.platform, appVersion: x.app_version, osVersion: x.os_version, firstSessionId: x.first_session_id,
      };
    },

    /** Stores a summary unless one is there already; returns the one that is stored. */
    async storeSummary(groupId: string, summary: string, source: string): Promise<{ summary: string; source: string }> {
      await db.query(`UPDATE ${GROUPS} SET summary = $2, summary_source = $3, summary_at = now(), ${STAMP} WHERE id = $1 AND summary IS NULL`, [groupId, summary, source]);
      const r = await db.query<{ summary: string; summary_source: string }>(`SELECT summary, summary_source FROM ${GROUPS} WHERE id = $1`, [groupId]);
      const row = r.rows[0];
      return row ? { summary: row.summary, source: row.summary_source } : { summary, source };
    },
  };
}

export function crashGroupsRepo(
  db: Postgres,
  ch: ClickHouse,
  budget: QueueBudget,
  opts: { changeLagMs: number; touched?: (projectId: string, groupId: string) => void } = { changeLagMs: 0 },
) {
  const writer = new InsertBatcher(ch, OCCURRENCES, budget, OCCURRENCE_BATCH);

  async function withFacts(projectId: string, rows: GroupRow[]): Promise<CrashGroup[]> {
    const facts = await factsOf(ch, projectId, rows.map((r) => r.group_key));
    return rows.map((r) => toGroup(r, facts.get(r.group_key)));
  }

  async function get(projectId: string, groupId: string): Promise<CrashGroup | null> {
    const r = await db.query<GroupRow>(`SELECT ${COLUMNS} FROM ${GROUPS} WHERE project_id = $1 AND id = $2`, [projectId, groupId]);
    return r.rows[0] ? ((await withFacts(projectId, r.rows))[0] ?? null) : null;
  }

  /** A group's key (its occurrences' link), or null for an unknown group of this project. */
  async function keyOf(projectId: string, groupId: string): Promise<string | null> {
    const r = await db.query<{ group_key: string }>(`SELECT group_key FROM ${GROUPS} WHERE project_id = $1 AND id = $2`, [projectId, groupId]);
    return r.rows[0]?.group_key ?? null;
  }

  const byKey = async (q: Queryable, projectId: string, groupKey: string) =>
    (await q.query<{ id: string; status: CrashGroupStatus; first_seen_at: number; resolved_versions: string[] }>(
      `SELECT id, status, first_seen_at, resolved_versions FROM ${GROUPS} WHERE project_id = $1 AND group_key = $2`,
      [projectId, groupKey],
    )).rows[0];

  return {
    ...crashGroupAlerts(db),

    /**
     * The occurrence goes to ClickHouse first (group commit; a retried report is the same row),
     * then Postgres is only read, except: the group's row is created by its first occurrence
     * (INSERT … ON CONFLICT DO NOTHING decides the first occurrence exactly once, and enqueues
     * its alert in the same transaction); a resolved group from a version it had not had is
     * reopened; an occurrence older than the group's firstSeenAt moves it back; the session is
     * flagged the first time. Each of those writes is conditional, so repeating a report (or
     * racing it) changes nothing more. Writing the occurrence first means a group never shows
     * in Postgres with none to count, and a failure in between is repaired by the SDK's retry.
     */
    async record(projectId: string, c: CrashPayload): Promise<RecordCrashResult> {
      const session = await sessionQueries.forCrash(db, projectId, c.sessionId);
      if (!session) return { outcome: 'no-session' };
      const groupKey = crashGroupKey(c.stackTrace);
      const row: OccurrenceRow = {
        project_id: projectId, group_key: groupKey, id: crashOccurrenceId(c), occurred_at: chTime(c.timestamp),
        session_id: c.sessionId, user_id: session.user_id, device_fingerprint: session.device_fingerprint,
        platform: session.platform, os_version: session.os_version, app_version: session.app_version,
        brand: session.brand, model: session.model, message: c.message, stack_trace: c.stackTrace,
        is_fatal: c.isFatal, handled: c.handled,
      };
      await writer.add(Buffer.from(JSON.stringify(row) + '\n'), 1);

      let group = await byKey(db, projectId, groupKey);
      let newGroup = false;
      if (!group) {
        newGroup = await db.tx(async (q) => {
          const created = await q.query<{ id: string }>(
            `INSERT INTO ${GROUPS} (id, project_id, group_key, message, stack_head, is_fatal, handled,
               platform, app_version, os_version, first_seen_at, first_session_id)
             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
             ON CONFLICT (project_id, group_key) DO NOTHING RETURNING id`,
            [
              randomUUID(), projectId, groupKey, c.message, stackHead(c.stackTrace), c.isFatal, c.handled,
              session.platform, session.app_version, session.os_version, c.timestamp, c.sessionId,
            ],
          );
          const id = created.rows[0]?.id;
          if (id !== undefined) await enqueueJob(q, projectId, id, NEW_GROUP_JOB);
          return id !== undefined;
        });
        group = await byKey(db, projectId, groupKey);
        // Created above or by a concurrent first occurrence, and groups are never deleted.
        if (!group) throw new Error(`crash group ${groupKey} of project ${projectId} missing after its insert`);
      }
      if (!newGroup) {
        if (statusAfterOccurrence(group.status, session.app_version, group.resolved_versions) === 'open') {
          // Re-checked under the row lock: a status change or a new resolution since the read wins.
          await db.query(
            `UPDATE ${GROUPS} SET status = 'open', ${STAMP}
             WHERE project_id = $1 AND id = $2 AND status = 'resolved' AND NOT ($3 = ANY(resolved_versions))`,
            [projectId, group.id, session.app_version],
          );
        }
        if (c.timestamp < Number(group.first_seen_at)) {
          await db.query(`UPDATE ${GROUPS} SET first_seen_at = $3, ${STAMP} WHERE project_id = $1 AND id = $2 AND first_seen_at > $3`, [projectId, group.id, c.timestamp]);
        }
        opts.touched?.(projectId, group.id);
      }
      if (!session.has_crash || (c.isFatal && session.status !== 'crashed')) {
        await sessionQueries.markCrashed(db, projectId, c.sessionId, c.isFatal);
      }
      return { outcome: 'recorded', groupId: group.id, newGroup };
    },

    /** Moves the updatedAt of groups that had new occurrences (the coalesced marks of record()). */
    async touch(projectId: string, groupIds: readonly string[]): Promise<void> {
      await db.query(`UPDATE ${GROUPS} SET ${STAMP} WHERE project_id = $1 AND id = ANY($2::uuid[])`, [projectId, groupIds]);
    },

    /** Resolves once every occurrence accepted so far is written (shutdown, tests). */
    drain: () => writer.drain(),
    /** The table's group commit (its queue and inserts are measured). */
    batcher: writer,

    get,

    /**
     * Most recently seen first. lastSeenAt lives in ClickHouse, so the page is cut after both
     * are read: the project's groups (of the status) from Postgres, their facts in one query.
     */
    async list(projectId: string, status: string | undefined, page: number, limit: number) {
      const params: unknown[] = [projectId];
      const w = status ? `project_id = $1 AND status = $${params.push(status)}` : 'project_id = $1';
      const rows = await db.query<GroupRow>(`SELECT ${COLUMNS} FROM ${GROUPS} WHERE ${w}`, params);
      const facts = await factsOf(ch, projectId, rows.rows.map((r) => r.group_key));
      const groups = rows.rows.map((r) => ({ ...toGroup(r, facts.get(r.group_key)), usersAffected: facts.get(r.group_key)?.users ?? 0 })).sort((a, b) =>
        a.lastSeenAt < b.lastSeenAt ? 1 : a.lastSeenAt > b.lastSeenAt ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      return pageEnvelope(groups.slice((page - 1) * limit, page * limit), groups.length, page, limit);
    },

    /** The crash page's facts of one group: distinct users, occurrences per app version, the latest occurrence whole. */
    async facts(projectId: string, groupId: string): Promise<CrashGroupFacts> {
      const key = await keyOf(projectId, groupId);
      if (key === null) return { usersAffected: 0, appVersionCounts: [], latest: null };
      const where = 'project_id = {project:String} AND group_key = {key:String}';
      const params = { project: projectId, key };
      const [agg] = await ch.query<{ u: number }>(`SELECT uniqExact(user_id) AS u FROM ${OCCURRENCES} WHERE ${where}`, params);
      const versions = await ch.query<{ v: string | null; n: number }>(
        `SELECT app_version AS v, uniqExact(id) AS n FROM ${OCCURRENCES} WHERE ${where} GROUP BY app_version ORDER BY n DESC, v LIMIT 100`, params);
      const [l] = await ch.query<OccurrenceReadRow & { stack_trace: string; handled: boolean | number }>(
        `SELECT ${OCCURRENCE_READ}, stack_trace, handled FROM ${OCCURRENCES} WHERE ${where} ORDER BY occurred_at DESC, id LIMIT 1`, params);
      return {
        usersAffected: Number(agg?.u ?? 0),
        appVersionCounts: versions.map((v) => ({ appVersion: v.v, occurrences: Number(v.n) })),
        latest: l ? { ...toOccurrence(l), stackTrace: l.stack_trace, handled: Boolean(l.handled) } : null,
      };
    },

    /** The group's occurrences, newest first, each with the session it happened in. */
    async occurrences(projectId: string, groupId: string, page: number, limit: number) {
      const key = await keyOf(projectId, groupId);
      if (key === null) return pageEnvelope<CrashOccurrence>([], 0, page, limit);
      const where = 'project_id = {project:String} AND group_key = {key:String}';
      const params = { project: projectId, key, limit, offset: (page - 1) * limit };
      const [total] = await ch.query<{ n: number }>(`SELECT uniqExact(id) AS n FROM ${OCCURRENCES} WHERE ${where}`, params);
      // FINAL: a retried report is one occurrence in the list, as in the count.
      const rows = await ch.query<OccurrenceReadRow>(
        `SELECT ${OCCURRENCE_READ} FROM ${OCCURRENCES} FINAL WHERE ${where} ORDER BY occurred_at DESC, id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`, params);
      return pageEnvelope(rows.map(toOccurrence), Number(total?.n ?? 0), page, limit);
    },

    /**
     * A status change by hand: any move (src/domain/crashGroupStatus.ts). Resolving snapshots the versions seen so far (from the
     * occurrences): a later occurrence from one of them leaves the group resolved, one from a
     * new version reopens it. Setting the status a group already has changes nothing (safe to
     * retry). The group is read once, locked, and the update returns its new state.
     */
    async setStatus(projectId: string, groupId: string, to: CrashGroupStatus): Promise<SetStatusResult> {
      const row = await db.tx(async (q): Promise<SetStatusResult | GroupRow> => {
        const g = await q.query<GroupRow>(`SELECT ${COLUMNS} FROM ${GROUPS} WHERE project_id = $1 AND id = $2 FOR UPDATE`, [projectId, groupId]);
        const row = g.rows[0];
        if (!row) return { outcome: 'not-found' };
        // Any manual move (src/domain/crashGroupStatus.ts); setting the status it has changes nothing.
        if (!canTransition(row.status, to)) return row;
        const resolved = to === 'resolved' ? await versionsOf(ch, projectId, row.group_key) : null;
        const u = await q.query<GroupRow>(
          `UPDATE ${GROUPS} SET status = $3, ${STAMP}, resolved_versions = COALESCE($4::text[], resolved_versions)
           WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
          [projectId, groupId, to, resolved],
        );
        const updated = u.rows[0];
        if (!updated) throw new Error(`crash group ${groupId} vanished under its row lock`);
        return updated;
      });
      if ('outcome' in row) return row;
      const [group] = await withFacts(projectId, [row]);
      if (!group) throw new Error(`crash group ${groupId} lost its read model`);
      return { outcome: 'ok', group };
    },

    /**
     * Crash groups of a project by (firstSeenAt, id), or by (updatedAt, id) with a change window;
     * each page's counters come from ClickHouse.
     */
    export: pgResource<ChangeFilter, GroupRow & Record<string, unknown>>(db, {
      name: 'crashes',
      fields: CRASH_FIELDS,
      parquet: CRASH_PARQUET,
      table: GROUPS,
      columns: COLUMNS,
      key: ['first_seen_at', 'id'],
      where: () => '',
      async shape(projectId, rows) {
        return (await withFacts(projectId, rows)).map(exportFields);
      },
    }, { lagMs: opts.changeLagMs }),

    /** The session's crashes with their group, where they happened on the timeline. */
    async ofSession(projectId: string, sessionId: string) {
      const occ = await ch.query<{ at: number; fatal: boolean | number; k: string }>(
        `SELECT toUnixTimestamp64Milli(occurred_at) AS at, is_fatal AS fatal, group_key AS k FROM ${OCCURRENCES} FINAL
         WHERE project_id = {project:String} AND session_id = {session:UUID} ORDER BY occurred_at, id`,
        { project: projectId, session: sessionId },
      );
      const keys = [...new Set(occ.map((o) => o.k))];
      const g = keys.length === 0 ? [] : (await db.query<{ id: string; group_key: string; message: string; status: string }>(
        `SELECT id, group_key, message, status FROM ${GROUPS} WHERE project_id = $1 AND group_key = ANY($2::text[])`,
        [projectId, keys],
      )).rows;
      const groups = new Map(g.map((x) => [x.group_key, x]));
      return occ.map((o) => {
        const x = groups.get(o.k);
        return { occurredAt: isoMs(Number(o.at)), isFatal: Boolean(o.fatal), groupId: x?.id ?? null, message: x?.message ?? null, groupStatus: x?.status ?? null };
      });
    },
  };
}

/**
 * Copies the occurrences of the Postgres layout before 006_crash_facts.sql into ClickHouse, then
 * drops the old tables, in the caller's transaction (start-up, under the migration lock). Rows
 * written before 005_dashboard.sql had no message, trace or handled flag of their own: they take
 * their group's (message, stack head, handled), and their session's context. A start stopped half-way copies again:
 * the copies are the same rows, which ClickHouse collapses.
 */
export async function moveLegacyOccurrences(q: Queryable, ch: ClickHouse): Promise<number> {
  const exists = await q.query<{ t: string | null }>(`SELECT to_regclass('${LEGACY_OCCURRENCES}')::text AS t`);
  if (!exists.rows[0]?.t) return 0;
  let moved = 0;
  let after: [string, string] = ['', ''];
  for (;;) {
    const r = await q.query<{
      project_id: string; id: string; group_key: string; session_id: string; device_fingerprint: string; app_version: string | null;
      occurred_at: number; is_fatal: boolean; message: string | null; stack_trace: string | null; handled: boolean | null;
      user_id: string | null; platform: string | null; os_version: string | null; brand: string | null; model: string | null;
    }>(
      // 005_dashboard.sql gave occurrences their own trace, message and context; older ones take their group's.
      `SELECT o.project_id::text AS project_id, o.id, o.group_key, o.session_id::text AS session_id, o.device_fingerprint, o.app_version,
              o.occurred_at, o.is_fatal, COALESCE(o.message, g.message) AS message, COALESCE(o.stack_trace, g.stack_head) AS stack_trace,
              COALESCE(o.handled, g.handled) AS handled, o.user_id, o.platform, o.os_version, o.brand, o.model
       FROM ${LEGACY_OCCURRENCES} o LEFT JOIN ${GROUPS} g ON g.project_id = o.project_id AND g.group_key = o.group_key
       WHERE (o.project_id::text, o.id) > ($1, $2) ORDER BY o.project_id::text, o.id LIMIT 5000`,
      after,
    );
    const last = r.rows[r.rows.length - 1];
    if (!last) break;
    const sessions = await sessionQueries.forCrashMany(q, r.rows.map((o) => ({ projectId: o.project_id, sessionId: o.session_id })));
    const rows: OccurrenceRow[] = r.rows.map((o) => {
      const s = sessions.get(`${o.project_id}:${o.session_id}`);
      return {
        project_id: o.project_id, group_key: o.group_key, id: o.id, occurred_at: chTime(Number(o.occurred_at)),
        session_id: o.session_id, user_id: o.user_id ?? s?.user_id ?? null, device_fingerprint: o.device_fingerprint,
        platform: o.platform ?? s?.platform ?? null, os_version: o.os_version ?? s?.os_version ?? null, app_version: o.app_version,
        brand: o.brand ?? s?.brand ?? null, model: o.model ?? s?.model ?? null,
        message: o.message ?? '', stack_trace: o.stack_trace ?? '', is_fatal: o.is_fatal, handled: o.handled ?? false,
      };
    });
    await ch.insert(OCCURRENCES, rows);
    moved += rows.length;
    after = [last.project_id, last.id];
  }
  await q.query(`DROP TABLE ${LEGACY_OCCURRENCES}`);
  await q.query(`DROP TABLE IF EXISTS ${LEGACY_DEVICES}`);
  return moved;
}

export type CrashGroupsRepo = ReturnType<typeof crashGroupsRepo>;
