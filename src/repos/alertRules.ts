import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { lockProjectRow } from './projects.ts';
import { isoTime } from '../lib/time.ts';
import type { AlertRule, RuleKind } from '../domain/alertRules.ts';

/** The Postgres `alert_rules` table: a project's spike and crash-free rules. */
const TABLE = 'alert_rules';

interface Row {
  id: string;
  project_id: string;
  name: string;
  kind: RuleKind;
  threshold: number;
  window_minutes: number;
  min_sessions: number;
  cooldown_minutes: number;
  levels: string[] | null;
  emails: string[] | null;
  webhook_ids: string[];
  enabled: boolean;
  created_at: Date | string;
}
const COLUMNS = `id, project_id, name, kind, threshold, window_minutes, min_sessions, cooldown_minutes, levels, emails,
  webhook_ids, enabled, created_at`;
const toRule = (r: Row): AlertRule => ({
  id: r.id,
  projectId: r.project_id,
  name: r.name,
  kind: r.kind,
  threshold: Number(r.threshold),
  windowMinutes: r.window_minutes,
  minSessions: r.min_sessions,
  cooldownMinutes: r.cooldown_minutes,
  levels: r.levels ?? null,
  emails: r.emails,
  webhookIds: r.webhook_ids,
  enabled: r.enabled,
  createdAt: isoTime(r.created_at),
});

export type NewRule = Omit<AlertRule, 'id' | 'projectId' | 'createdAt'>;

/** A rule's settings as parameters, in the column order of `create` and `replace` (name … levels). */
const settingsParams = (r: NewRule) => [
  r.name,
  r.kind,
  r.threshold,
  r.windowMinutes,
  r.minSessions,
  r.cooldownMinutes,
  r.emails,
  r.webhookIds,
  r.enabled,
  r.levels,
];

export function alertRulesRepo(db: Postgres) {
  return {
    /** The new rule, or null when the project already has `max` rules (creates take turns: lockProjectRow). */
    async create(projectId: string, r: NewRule, max: number): Promise<AlertRule | null> {
      const x = await db.tx(async (q) => {
        await lockProjectRow(q, projectId);
        return q.query<Row>(
          `INSERT INTO ${TABLE} (id, project_id, name, kind, threshold, window_minutes, min_sessions, cooldown_minutes,
             emails, webhook_ids, enabled, levels)
           SELECT $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12
           WHERE (SELECT count(*) FROM ${TABLE} WHERE project_id = $2) < $13
           RETURNING ${COLUMNS}`,
          [randomUUID(), projectId, ...settingsParams(r), max],
        );
      });
      return x.rows[0] ? toRule(x.rows[0]) : null;
    },

    async get(projectId: string, id: string): Promise<AlertRule | null> {
      const r = await db.query<Row>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE project_id = $1 AND id = $2`, [
        projectId,
        id,
      ]);
      return r.rows[0] ? toRule(r.rows[0]) : null;
    },

    async list(projectId: string): Promise<AlertRule[]> {
      const r = await db.query<Row>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE project_id = $1 ORDER BY created_at, id`, [
        projectId,
      ]);
      return r.rows.map(toRule);
    },

    /** Replaces the rule's settings (the caller merged the patch into the current rule). */
    async replace(projectId: string, id: string, r: NewRule): Promise<AlertRule | null> {
      const x = await db.query<Row>(
        `UPDATE ${TABLE} SET name = $3, kind = $4, threshold = $5, window_minutes = $6, min_sessions = $7, cooldown_minutes = $8,
           emails = $9, webhook_ids = $10, enabled = $11, levels = $12
         WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
        [projectId, id, ...settingsParams(r)],
      );
      return x.rows[0] ? toRule(x.rows[0]) : null;
    },

    async remove(projectId: string, id: string): Promise<boolean> {
      const r = await db.query(`DELETE FROM ${TABLE} WHERE project_id = $1 AND id = $2`, [projectId, id]);
      return r.rowCount > 0;
    },

    /** Every enabled rule, for the worker's pass. */
    async enabled(): Promise<AlertRule[]> {
      const r = await db.query<Row>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE enabled ORDER BY project_id, created_at`);
      return r.rows.map(toRule);
    },

    /** The rule a firing belongs to (the email job reads it by id). */
    async byId(id: string): Promise<AlertRule | null> {
      const r = await db.query<Row>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE id = $1`, [id]);
      return r.rows[0] ? toRule(r.rows[0]) : null;
    },
  };
}

/** Every address the project's rules list, so the recipients' confirmations keep them. */
export async function ruleEmailsOf(q: Queryable, projectId: string): Promise<string[]> {
  const r = await q.query<{ email: string }>(
    `SELECT DISTINCT unnest(emails) AS email FROM ${TABLE} WHERE project_id = $1 AND emails IS NOT NULL`,
    [projectId],
  );
  return r.rows.map((x) => x.email);
}

export type AlertRulesRepo = ReturnType<typeof alertRulesRepo>;
