import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { crashGroupKey, crashOccurrenceId, type CrashPayload } from '../domain/crashGrouping.ts';
import { statusAfterCrash, type SessionStatus } from '../domain/sessionState.ts';
import { statusAfterOccurrence, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';

export const NEW_GROUP_JOB = 'new_crash_group';

export type RecordCrashResult =
  | { outcome: 'no-session' }
  | { outcome: 'duplicate' }
  | { outcome: 'recorded'; groupId: string; newGroup: boolean };

const STACK_HEAD_LINES = 5;

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
            randomUUID(), projectId, groupKey, c.message, c.stackTrace.split('\n').slice(0, STACK_HEAD_LINES).join('\n'),
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
  };
}

export type CrashesRepo = ReturnType<typeof crashesRepo>;
