import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { crashGroupKey, crashOccurrenceId, stackHead, type CrashPayload } from '../domain/crashGrouping.ts';
import { statusAfterCrash } from '../domain/sessionState.ts';
import { canTransition, statusAfterOccurrence, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import { isoMs, isoTime } from '../domain/time.ts';
import { pageEnvelope } from '../domain/paging.ts';
import { sessionQueries } from './sessions.ts';
import { enqueueJob, NEW_GROUP_JOB } from './outbox.ts';
import { pgResource, PG_NOW_MS } from './exportCore/postgres.ts';
import type { ParquetColumn } from './exportCore/parquet.ts';
import type { ChangeFilter } from './exportCore/types.ts';

/**
 * The crash-group aggregate in Postgres: `crash_groups`, the occurrences that count into them
 * (`crash_occurrences`) and the devices they affected (`crash_group_devices`).
 */
const GROUPS = 'crash_groups';
const OCCURRENCES = 'crash_occurrences';
const DEVICES = 'crash_group_devices';

export type RecordCrashResult =
  | { outcome: 'no-session' }
  | { outcome: 'duplicate' }
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
  /** The latest occurrence; its stackTrace is null for occurrences stored before whole traces were. */
  latest: (CrashOccurrence & { stackTrace: string | null; handled: boolean | null }) | null;
}

interface OccurrenceRow {
  occurred_at: number; session_id: string; user_id: string | null; app_version: string | null; platform: string | null;
  os_version: string | null; brand: string | null; model: string | null; is_fatal: boolean; message: string | null;
}

const OCCURRENCE_COLUMNS = 'o.occurred_at, o.session_id, o.user_id, o.app_version, o.platform, o.os_version, o.brand, o.model, o.is_fatal, o.message';

const toOccurrence = (r: OccurrenceRow): CrashOccurrence => ({
  occurredAt: isoMs(r.occurred_at) as string,
  sessionId: r.session_id,
  userId: r.user_id,
  appVersion: r.app_version,
  platform: r.platform,
  osVersion: r.os_version,
  brand: r.brand,
  model: r.model,
  isFatal: r.is_fatal,
  message: r.message,
});

interface GroupRow {
  id: string; message: string; status: CrashGroupStatus; is_fatal: boolean; handled: boolean;
  occurrence_count: number; affected_devices: number; platform: string | null; app_version: string | null;
  os_version: string | null; first_seen_at: number; last_seen_at: number; stack_head: string;
  summary: string | null; summary_source: string | null; summary_at: Date | string | null; app_versions: string[]; resolved_versions: string[];
}

const CORE_COLUMNS =
  'id, message, status, is_fatal, handled, occurrence_count, affected_devices, platform, app_version, os_version, first_seen_at, last_seen_at';
const COLUMNS = `${CORE_COLUMNS}, stack_head, summary, summary_source, summary_at, app_versions, resolved_versions`;

/** The contract's crash-group fields (the export row), in the contract's order. */
function coreFields(r: Omit<GroupRow, 'stack_head' | 'summary' | 'summary_source' | 'summary_at' | 'app_versions' | 'resolved_versions'>) {
  return {
    id: r.id,
    message: r.message,
    status: r.status,
    isFatal: r.is_fatal,
    handled: r.handled,
    occurrenceCount: r.occurrence_count,
    affectedDevices: r.affected_devices,
    platform: r.platform,
    appVersion: r.app_version,
    osVersion: r.os_version,
    firstSeenAt: isoMs(r.first_seen_at),
    lastSeenAt: isoMs(r.last_seen_at),
  };
}

const toGroup = (r: GroupRow): CrashGroup => ({
  ...coreFields(r),
  stackHead: r.stack_head,
  summary: r.summary,
  summarySource: r.summary_source,
  summaryAt: isoTime(r.summary_at),
  appVersions: r.app_versions,
  resolvedVersions: r.resolved_versions,
});

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
 * The occurrence's stamp rides on the group update each occurrence already makes. Not
 * lastSeenAt itself: that is the device's clock, and a late report of an old crash changes
 * occurrenceCount without moving it (docs/decisions.md, "Incremental exports").
 */
const STAMP = `updated_at = ${PG_NOW_MS}`;

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

async function addDevice(q: Queryable, groupId: string, fingerprint: string): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO ${DEVICES} (group_id, device_fingerprint) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1`,
    [groupId, fingerprint],
  );
  return r.rows.length > 0;
}

/** Reads only Postgres, so the worker process (which opens no ClickHouse) can use it too. */
export function crashGroupsRepo(db: Postgres, opts: { changeLagMs: number } = { changeLagMs: 0 }) {
  /** Distinct user ids among each group's occurrences (occurrences without a user do not count). */
  async function usersAffected(projectId: string, groupIds: string[]): Promise<Map<string, number>> {
    if (groupIds.length === 0) return new Map();
    const r = await db.query<{ id: string; n: number }>(
      `SELECT g.id, count(DISTINCT o.user_id)::int AS n FROM ${GROUPS} g
       JOIN ${OCCURRENCES} o ON o.project_id = g.project_id AND o.group_key = g.group_key
       WHERE g.project_id = $1 AND g.id = ANY($2::uuid[]) GROUP BY g.id`,
      [projectId, groupIds],
    );
    return new Map(r.rows.map((x) => [x.id, x.n]));
  }

  async function get(projectId: string, groupId: string): Promise<CrashGroup | null> {
    const r = await db.query<GroupRow>(`SELECT ${COLUMNS} FROM ${GROUPS} WHERE project_id = $1 AND id = $2`, [projectId, groupId]);
    return r.rows[0] ? toGroup(r.rows[0]) : null;
  }

  return {
    /**
     * One transaction: the occurrence (its identity is the whole payload, so a retry adds
     * nothing), the group (created, or counted and updated), the session's status, and for a
     * new group the outbox job for its summary and alert.
     */
    async record(projectId: string, c: CrashPayload): Promise<RecordCrashResult> {
      return db.tx(async (q) => {
        const session = await sessionQueries.lockForCrash(q, projectId, c.sessionId);
        if (!session) return { outcome: 'no-session' };

        const groupKey = crashGroupKey(c.stackTrace);
        const occ = await q.query(
          `INSERT INTO ${OCCURRENCES} (project_id, id, group_key, session_id, device_fingerprint, app_version, occurred_at, is_fatal,
             stack_trace, message, handled, user_id, platform, os_version, brand, model)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) ON CONFLICT DO NOTHING RETURNING 1`,
          [
            projectId, crashOccurrenceId(c), groupKey, c.sessionId, session.device_fingerprint, session.app_version, c.timestamp, c.isFatal,
            c.stackTrace, c.message, c.handled, session.user_id, session.platform, session.os_version, session.brand, session.model,
          ],
        );
        if (!occ.rows.length) return { outcome: 'duplicate' };

        const appVersions = session.app_version === null ? [] : [session.app_version];
        const created = await q.query<{ id: string }>(
          `INSERT INTO ${GROUPS} (id, project_id, group_key, message, stack_head, is_fatal, handled, occurrence_count,
             affected_devices, platform, app_version, os_version, first_seen_at, last_seen_at, app_versions)
           VALUES ($1,$2,$3,$4,$5,$6,$7,1,1,$8,$9,$10,$11,$11,$12)
           ON CONFLICT (project_id, group_key) DO NOTHING RETURNING id`,
          [
            randomUUID(), projectId, groupKey, c.message, stackHead(c.stackTrace),
            c.isFatal, c.handled, session.platform, session.app_version, session.os_version, c.timestamp, appVersions,
          ],
        );

        let groupId: string;
        const newRow = created.rows[0];
        if (newRow) {
          groupId = newRow.id;
          await addDevice(q, groupId, session.device_fingerprint);
          await enqueueJob(q, projectId, groupId, NEW_GROUP_JOB);
        } else {
          const g = await q.query<{ id: string; status: CrashGroupStatus; last_seen_at: number; resolved_versions: string[] }>(
            `SELECT id, status, last_seen_at, resolved_versions FROM ${GROUPS} WHERE project_id = $1 AND group_key = $2 FOR UPDATE`,
            [projectId, groupKey],
          );
          const group = g.rows[0];
          // The insert above found the key taken, and groups are never deleted.
          if (!group) throw new Error(`crash group ${groupKey} of project ${projectId} vanished inside its transaction`);
          groupId = group.id;
          const newDevice = await addDevice(q, groupId, session.device_fingerprint);
          const latest = c.timestamp >= group.last_seen_at;
          await q.query(
            `UPDATE ${GROUPS} SET
               occurrence_count = occurrence_count + 1,
               affected_devices = affected_devices + $3,
               is_fatal = is_fatal OR $4,
               handled = handled AND $5,
               first_seen_at = LEAST(first_seen_at, $6),
               last_seen_at = GREATEST(last_seen_at, $6),
               platform = CASE WHEN $7 THEN $8 ELSE platform END,
               app_version = CASE WHEN $7 THEN $9 ELSE app_version END,
               os_version = CASE WHEN $7 THEN $10 ELSE os_version END,
               app_versions = CASE WHEN $9::text IS NULL OR $9 = ANY(app_versions) THEN app_versions ELSE array_append(app_versions, $9) END,
               status = $11,
               ${STAMP}
             WHERE project_id = $1 AND id = $2`,
            [
              projectId, groupId, newDevice ? 1 : 0, c.isFatal, c.handled, c.timestamp, latest,
              session.platform, session.app_version, session.os_version,
              statusAfterOccurrence(group.status, session.app_version, group.resolved_versions),
            ],
          );
        }

        await sessionQueries.markCrashed(q, projectId, c.sessionId, statusAfterCrash(session.status, c.isFatal));
        return { outcome: 'recorded', groupId, newGroup: newRow !== undefined };
      });
    },

    get,

    /** Most recently seen first. */
    async list(projectId: string, status: string | undefined, page: number, limit: number) {
      const params: unknown[] = [projectId];
      const w = status ? `project_id = $1 AND status = $${params.push(status)}` : 'project_id = $1';
      const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${GROUPS} WHERE ${w}`, params);
      const rows = await db.query<GroupRow>(
        `SELECT ${COLUMNS} FROM ${GROUPS} WHERE ${w} ORDER BY last_seen_at DESC, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, limit, (page - 1) * limit],
      );
      const users = await usersAffected(projectId, rows.rows.map((g) => g.id));
      return pageEnvelope(rows.rows.map((g) => ({ ...toGroup(g), usersAffected: users.get(g.id) ?? 0 })), total.rows[0]?.n ?? 0, page, limit);
    },

    /** The crash page's facts of one group: distinct users, occurrences per app version, the latest occurrence whole. */
    async facts(projectId: string, groupId: string): Promise<CrashGroupFacts> {
      const users = await usersAffected(projectId, [groupId]);
      const versions = await db.query<{ app_version: string | null; n: number }>(
        `SELECT o.app_version, count(*)::int AS n FROM ${GROUPS} g JOIN ${OCCURRENCES} o ON o.project_id = g.project_id AND o.group_key = g.group_key
         WHERE g.project_id = $1 AND g.id = $2 GROUP BY o.app_version ORDER BY n DESC, o.app_version LIMIT 100`,
        [projectId, groupId],
      );
      const latest = await db.query<OccurrenceRow & { stack_trace: string | null; handled: boolean | null }>(
        `SELECT ${OCCURRENCE_COLUMNS}, o.stack_trace, o.handled FROM ${GROUPS} g
         JOIN ${OCCURRENCES} o ON o.project_id = g.project_id AND o.group_key = g.group_key
         WHERE g.project_id = $1 AND g.id = $2 ORDER BY o.occurred_at DESC, o.id LIMIT 1`,
        [projectId, groupId],
      );
      const l = latest.rows[0];
      return {
        usersAffected: users.get(groupId) ?? 0,
        appVersionCounts: versions.rows.map((v) => ({ appVersion: v.app_version, occurrences: v.n })),
        latest: l ? { ...toOccurrence(l), stackTrace: l.stack_trace, handled: l.handled } : null,
      };
    },

    /** The group's occurrences, newest first, each with the session it happened in. */
    async occurrences(projectId: string, groupId: string, page: number, limit: number) {
      const from = `${GROUPS} g JOIN ${OCCURRENCES} o ON o.project_id = g.project_id AND o.group_key = g.group_key WHERE g.project_id = $1 AND g.id = $2`;
      const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${from}`, [projectId, groupId]);
      const rows = await db.query<OccurrenceRow>(
        `SELECT ${OCCURRENCE_COLUMNS} FROM ${from} ORDER BY o.occurred_at DESC, o.id LIMIT $3 OFFSET $4`,
        [projectId, groupId, limit, (page - 1) * limit],
      );
      return pageEnvelope(rows.rows.map(toOccurrence), total.rows[0]?.n ?? 0, page, limit);
    },

    /**
     * A status change by hand: any move (src/domain/crashGroupStatus.ts). Resolving snapshots the versions seen so far: a later occurrence
     * from one of them leaves the group resolved, one from a new version reopens it. Setting
     * the status a group already has changes nothing (safe to retry). The group is read once,
     * locked, and the update returns its new state.
     */
    async setStatus(projectId: string, groupId: string, to: CrashGroupStatus): Promise<SetStatusResult> {
      return db.tx(async (q): Promise<SetStatusResult> => {
        const g = await q.query<GroupRow>(`SELECT ${COLUMNS} FROM ${GROUPS} WHERE project_id = $1 AND id = $2 FOR UPDATE`, [projectId, groupId]);
        const row = g.rows[0];
        if (!row) return { outcome: 'not-found' };
        const from = row.status;
        if (!canTransition(from, to)) return { outcome: 'ok', group: toGroup(row) };
        const u = await q.query<GroupRow>(
          `UPDATE ${GROUPS} SET status = $3, ${STAMP},
             resolved_versions = CASE WHEN $3 = 'resolved' THEN app_versions ELSE resolved_versions END
           WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
          [projectId, groupId, to],
        );
        const updated = u.rows[0];
        if (!updated) throw new Error(`crash group ${groupId} vanished under its row lock`);
        return { outcome: 'ok', group: toGroup(updated) };
      });
    },

    /** Crash groups of a project by (firstSeenAt, id), or by (updatedAt, id) with a change window. */
    export: pgResource<ChangeFilter, GroupRow & { updated_at: number } & Record<string, unknown>>(db, {
      name: 'crashes',
      fields: CRASH_FIELDS,
      parquet: CRASH_PARQUET,
      table: GROUPS,
      columns: `${CORE_COLUMNS}, updated_at`,
      key: ['first_seen_at', 'id'],
      where: () => '',
      async shape(_projectId, rows) {
        return rows.map((r) => ({ ...coreFields(r), updatedAt: isoMs(r.updated_at) }));
      },
    }, { lagMs: opts.changeLagMs }),

    /** The session's crashes with their group, where they happened on the timeline. */
    async ofSession(projectId: string, sessionId: string) {
      const r = await db.query<{ occurred_at: number; is_fatal: boolean; group_id: string | null; message: string | null; status: string | null }>(
        `SELECT o.occurred_at, o.is_fatal, g.id AS group_id, g.message, g.status
         FROM ${OCCURRENCES} o LEFT JOIN ${GROUPS} g ON g.project_id = o.project_id AND g.group_key = o.group_key
         WHERE o.project_id = $1 AND o.session_id = $2 ORDER BY o.occurred_at, o.id`,
        [projectId, sessionId],
      );
      return r.rows.map((c) => ({ occurredAt: isoMs(c.occurred_at), isFatal: c.is_fatal, groupId: c.group_id, message: c.message, groupStatus: c.status }));
    },

    /** The group (any project: the outbox job names it by id) and its first occurrence's session. */
    async alertFacts(groupId: string): Promise<AlertFacts | null> {
      const r = await db.query<{
        id: string; project_id: string; message: string; stack_head: string; is_fatal: boolean; handled: boolean;
        first_seen_at: number; summary: string | null; summary_source: string | null; platform: string | null;
        app_version: string | null; os_version: string | null; session_id: string | null;
      }>(
        `SELECT g.id, g.project_id, g.message, g.stack_head, g.is_fatal, g.handled, g.first_seen_at, g.summary,
                g.summary_source, g.platform, g.app_version, g.os_version, first.session_id
         FROM ${GROUPS} g
         LEFT JOIN LATERAL (
           SELECT o.session_id FROM ${OCCURRENCES} o
           WHERE o.project_id = g.project_id AND o.group_key = g.group_key
           ORDER BY o.occurred_at, o.created_at LIMIT 1
         ) first ON true
         WHERE g.id = $1`,
        [groupId],
      );
      const x = r.rows[0];
      if (!x) return null;
      return {
        groupId: x.id, projectId: x.project_id, message: x.message, stackHead: x.stack_head, isFatal: x.is_fatal,
        handled: x.handled, firstSeenAt: Number(x.first_seen_at), summary: x.summary, summarySource: x.summary_source,
        platform: x.platform, appVersion: x.app_version, osVersion: x.os_version, firstSessionId: x.session_id,
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

export type CrashGroupsRepo = ReturnType<typeof crashGroupsRepo>;
