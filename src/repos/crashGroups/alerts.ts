import type { Postgres } from '../../stores/postgres/port.ts';
import { GROUPS, STAMP } from './rows.ts';

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

/** The alert's reads and its one write: Postgres only, so the worker process (no ClickHouse) can use them. */
export function crashGroupAlerts(db: Postgres) {
  return {
    /** The group (any project: the outbox job names it by id) and its first occurrence's session. */
    async alertFacts(groupId: string): Promise<AlertFacts | null> {
      const r = await db.query<{
        id: string;
        project_id: string;
        message: string;
        stack_head: string;
        is_fatal: boolean;
        handled: boolean;
        first_seen_at: number;
        summary: string | null;
        summary_source: string | null;
        platform: string | null;
        app_version: string | null;
        os_version: string | null;
        first_session_id: string | null;
      }>(
        `SELECT id, project_id, message, stack_head, is_fatal, handled, first_seen_at, summary, summary_source,
                platform, app_version, os_version, first_session_id
         FROM ${GROUPS} WHERE id = $1`,
        [groupId],
      );
      const x = r.rows[0];
      if (!x) return null;
      return {
        groupId: x.id,
        projectId: x.project_id,
        message: x.message,
        stackHead: x.stack_head,
        isFatal: x.is_fatal,
        handled: x.handled,
        firstSeenAt: Number(x.first_seen_at),
        summary: x.summary,
        summarySource: x.summary_source,
        platform: x.platform,
        appVersion: x.app_version,
        osVersion: x.os_version,
        firstSessionId: x.first_session_id,
      };
    },

    /** Stores a summary unless one is there already; returns the one that is stored. */
    async storeSummary(groupId: string, summary: string, source: string): Promise<{ summary: string; source: string }> {
      await db.query(
        `UPDATE ${GROUPS} SET summary = $2, summary_source = $3, summary_at = now(), ${STAMP} WHERE id = $1 AND summary IS NULL`,
        [groupId, summary, source],
      );
      const r = await db.query<{ summary: string; summary_source: string }>(
        `SELECT summary, summary_source FROM ${GROUPS} WHERE id = $1`,
        [groupId],
      );
      const row = r.rows[0];
      return row ? { summary: row.summary, source: row.summary_source } : { summary, source };
    },
  };
}
