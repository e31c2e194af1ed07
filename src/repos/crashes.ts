import { crashGroupFields } from './shapes.ts';
import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { crashGroupKey, crashOccurrenceId, stackHead, type CrashPayload } from '../domain/crashGrouping.ts';
import { statusAfterCrash, type SessionStatus } from '../domain/sessionState.ts';
import { allowedTransitions, canTransition, statusAfterOccurrence, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import type { CrashContext } from '../domain/crashSummary.ts';

export const NEW_GROUP_JOB = 'new_crash_group';

export type RecordCrashResult =
  | { outcome: 'no-session' }
  | { outcome: 'duplicate' }
  | { outcome: 'recorded'; groupId: string; newGroup: boolean };


/** A crash group as the management API shows it: the export row plus workflow and alert fields. */
export interface CrashGroupView {
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
  appVersions: string[];
  resolvedVersions: string[];
  alert: { status: string; attempts: number; lastError: string | null; sentAt: string | null; note: string | null } | null;
}

interface GroupRow {
  id: string; message: string; status: CrashGroupStatus; is_fatal: boolean; handled: boolean;
  occurrence_count: number; affected_devices: number; platform: string | null; app_version: string | null;
  os_version: string | null; first_seen_at: number; last_seen_at: number; stack_head: string;
  summary: string | null; summary_source: string | null; app_versions: string[]; resolved_versions: string[];
  alert_status: string | null; alert_attempts: number | null; alert_last_error: string | null;
  alert_sent_at: Date | string | null; alert_note: string | null;
}

const GROUP_VIEW_SQL = `
  SELECT g.id, g.message, g.status, g.is_fatal, g.handled, g.occurrence_count, g.affected_devices, g.platform,
         g.app_version, g.os_version, g.first_seen_at, g.last_seen_at, g.stack_head, g.summary, g.summary_source,
         g.app_versions, g.resolved_versions,
         o.status AS alert_status, o.attempts AS alert_attempts, o.last_error AS alert_last_error,
         o.sent_at AS alert_sent_at, o.note AS alert_note
  FROM crash_groups g
  LEFT JOIN alert_outbox o ON o.group_id = g.id AND o.kind = '${NEW_GROUP_JOB}'
  WHERE g.project_id = $1 AND g.id = $2`;


function toView(r: GroupRow): CrashGroupView {
  return {
    ...crashGroupFields(r),
    status: r.status,
    stackHead: r.stack_head,
    summary: r.summary,
    summarySource: r.summary_source,
    appVersions: r.app_versions,
    resolvedVersions: r.resolved_versions,
    alert: r.alert_status === null
      ? null
      : {
          status: r.alert_status,
          attempts: r.alert_attempts ?? 0,
          lastError: r.alert_last_error,
          sentAt: r.alert_sent_at === null ? null : new Date(r.alert_sent_at).toISOString(),
          note: r.alert_note,
        },
  };
}

export type SetStatusResult =
  | { outcome: 'not-found' }
  | { outcome: 'invalid'; from: CrashGroupStatus; allowed: CrashGroupStatus[] }
  | { outcome: 'ok'; group: CrashGroupView };

/** What the alert job needs: the group, its project, and the first occurrence's session. */
export interface AlertSource extends CrashContext {
  groupId: string;
  projectId: string;
  projectName: string;
  alertEmails: string[] | null;
  firstSeenAt: number;
  summary: string | null;
  summarySource: string | null;
}

async function addDevice(q: Queryable, groupId: string, fingerprint: string): Promise<boolean> {
  const r = await q.query(
    'INSERT INTO crash_group_devices (group_id, device_fingerprint) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1',
    [groupId, fingerprint],
  );
  return r.rows.length > 0;
}

export function crashesRepo(db: Postgres) {
  return {
    /**
     * One transaction: the occurrence (its identity is the whole payload, so a retry adds
     * nothing), the group (created, or counted and updated), the session's status, and for a
     * new group the outbox job for its summary and alert.
     */
    async record(projectId: string, c: CrashPayload): Promise<RecordCrashResult> {
      return db.tx(async (q) => {
        const s = await q.query<{ status: SessionStatus; app_version: string | null; platform: string | null; os_version: string | null; device_fingerprint: string }>(
          'SELECT status, app_version, platform, os_version, device_fingerprint FROM sessions WHERE project_id = $1 AND id = $2 FOR UPDATE',
          [projectId, c.sessionId],
        );
        const session = s.rows[0];
        if (!session) return { outcome: 'no-session' };

        const groupKey = crashGroupKey(c.stackTrace);
        const occ = await q.query(
          `INSERT INTO crash_occurrences (project_id, id, group_key, session_id, device_fingerprint, app_version, occurred_at, is_fatal)
           VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT DO NOTHING RETURNING 1`,
          [projectId, crashOccurrenceId(c), groupKey, c.sessionId, session.device_fingerprint, session.app_version, c.timestamp, c.isFatal],
        );
        if (!occ.rows.length) return { outcome: 'duplicate' };

        const appVersions = session.app_version === null ? [] : [session.app_version];
        const created = await q.query<{ id: string }>(
          `INSERT INTO crash_groups (id, project_id, group_key, message, stack_head, is_fatal, handled, occurrence_count,
             affected_devices, platform, app_version, os_version, first_seen_at, last_seen_at, app_versions)
           VALUES ($1,$2,$3,$4,$5,$6,$7,1,1,$8,$9,$10,$11,$11,$12)
           ON CONFLICT (project_id, group_key) DO NOTHING RETURNING id`,
          [
            randomUUID(), projectId, groupKey, c.message, stackHead(c.stackTrace),
            c.isFatal, c.handled, session.platform, session.app_version, session.os_version, c.timestamp, appVersions,
          ],
        );

        let groupId: string;
        const newGroup = created.rows.length > 0;
        if (newGroup) {
          groupId = created.rows[0]!.id;
          await addDevice(q, groupId, session.device_fingerprint);
          await q.query('INSERT INTO alert_outbox (project_id, group_id, kind) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
            projectId, groupId, NEW_GROUP_JOB,
          ]);
        } else {
          const g = await q.query<{ id: string; status: CrashGroupStatus; last_seen_at: number; resolved_versions: string[] }>(
            'SELECT id, status, last_seen_at, resolved_versions FROM crash_groups WHERE project_id = $1 AND group_key = $2 FOR UPDATE',
            [projectId, groupKey],
          );
          const group = g.rows[0]!;
          groupId = group.id;
          const newDevice = await addDevice(q, groupId, session.device_fingerprint);
          const latest = c.timestamp >= group.last_seen_at;
          await q.query(
            `UPDATE crash_groups SET
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
               status = $11
             WHERE project_id = $1 AND id = $2`,
            [
              projectId, groupId, newDevice ? 1 : 0, c.isFatal, c.handled, c.timestamp, latest,
              session.platform, session.app_version, session.os_version,
              statusAfterOccurrence(group.status, session.app_version, group.resolved_versions),
            ],
          );
        }

        await q.query('UPDATE sessions SET has_crash = true, status = $3 WHERE project_id = $1 AND id = $2', [
          projectId, c.sessionId, statusAfterCrash(session.status, c.isFatal),
        ]);
        return { outcome: 'recorded', groupId, newGroup };
      });
    },

    async getGroup(projectId: string, groupId: string): Promise<CrashGroupView | null> {
      const r = await db.query<GroupRow>(GROUP_VIEW_SQL, [projectId, groupId]);
      return r.rows[0] ? toView(r.rows[0]) : null;
    },

    /**
     * A status change by hand. Resolving snapshots the versions seen so far: a later occurrence
     * from one of them leaves the group resolved, one from a new version reopens it. Setting
     * the status a group already has changes nothing (safe to retry).
     */
    async setStatus(projectId: string, groupId: string, to: CrashGroupStatus): Promise<SetStatusResult> {
      const r = await db.tx(async (q): Promise<SetStatusResult | { outcome: 'changed' }> => {
        const g = await q.query<{ status: CrashGroupStatus }>(
          'SELECT status FROM crash_groups WHERE project_id = $1 AND id = $2 FOR UPDATE',
          [projectId, groupId],
        );
        const from = g.rows[0]?.status;
        if (!from) return { outcome: 'not-found' };
        if (from === to) return { outcome: 'changed' };
        if (!canTransition(from, to)) return { outcome: 'invalid', from, allowed: allowedTransitions(from) };
        await q.query(
          `UPDATE crash_groups SET status = $3,
             resolved_versions = CASE WHEN $3 = 'resolved' THEN app_versions ELSE resolved_versions END
           WHERE project_id = $1 AND id = $2`,
          [projectId, groupId, to],
        );
        return { outcome: 'changed' };
      });
      if (r.outcome !== 'changed') return r;
      const group = await this.getGroup(projectId, groupId);
      return group ? { outcome: 'ok', group } : { outcome: 'not-found' };
    },

    async alertSource(groupId: string): Promise<AlertSource | null> {
      const r = await db.query<{
        id: string; project_id: string; project_name: string; alert_emails: string[] | null; message: string;
        stack_head: string; is_fatal: boolean; handled: boolean; first_seen_at: number; summary: string | null;
        summary_source: string | null; g_platform: string | null; g_app_version: string | null; g_os_version: string | null;
        s_platform: string | null; s_app_version: string | null; s_os_version: string | null; app_build_number: string | null;
        model: string | null; brand: string | null;
      }>(
        `SELECT g.id, g.project_id, p.name AS project_name, p.alert_emails, g.message, g.stack_head, g.is_fatal, g.handled,
                g.first_seen_at, g.summary, g.summary_source, g.platform AS g_platform, g.app_version AS g_app_version,
                g.os_version AS g_os_version, s.platform AS s_platform, s.app_version AS s_app_version,
                s.os_version AS s_os_version, s.app_build_number, s.model, s.brand
         FROM crash_groups g
         JOIN projects p ON p.id = g.project_id
         LEFT JOIN LATERAL (
           SELECT o.session_id FROM crash_occurrences o
           WHERE o.project_id = g.project_id AND o.group_key = g.group_key
           ORDER BY o.occurred_at, o.created_at LIMIT 1
         ) first ON true
         LEFT JOIN sessions s ON s.project_id = g.project_id AND s.id = first.session_id
         WHERE g.id = $1`,
        [groupId],
      );
      const x = r.rows[0];
      if (!x) return null;
      const fromSession = x.s_platform !== null || x.s_app_version !== null || x.model !== null;
      return {
        groupId: x.id,
        projectId: x.project_id,
        projectName: x.project_name,
        alertEmails: x.alert_emails,
        message: x.message,
        stackHead: x.stack_head,
        isFatal: x.is_fatal,
        handled: x.handled,
        firstSeenAt: Number(x.first_seen_at),
        summary: x.summary,
        summarySource: x.summary_source,
        platform: fromSession ? x.s_platform : x.g_platform,
        appVersion: fromSession ? x.s_app_version : x.g_app_version,
        osVersion: fromSession ? x.s_os_version : x.g_os_version,
        appBuildNumber: x.app_build_number,
        deviceModel: x.model,
        deviceBrand: x.brand,
      };
    },

    /** Stores a summary unless one is there already; returns the one that is stored. */
    async storeSummary(groupId: string, summary: string, source: string): Promise<{ summary: string; source: string }> {
      await db.query(
        'UPDATE crash_groups SET summary = $2, summary_source = $3 WHERE id = $1 AND summary IS NULL',
        [groupId, summary, source],
      );
      const r = await db.query<{ summary: string; summary_source: string }>(
        'SELECT summary, summary_source FROM crash_groups WHERE id = $1',
        [groupId],
      );
      const row = r.rows[0];
      return row ? { summary: row.summary, source: row.summary_source } : { summary, source };
    },
  };
}

export type CrashesRepo = ReturnType<typeof crashesRepo>;
