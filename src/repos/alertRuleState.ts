import { randomUUID } from 'node:crypto';
import type { Queryable } from '../stores/postgres/port.ts';
import type { Measure, SubjectState } from '../domain/alertRules.ts';

/**
 * The Postgres `alert_rule_state` and `alert_rule_firings` tables: whether each subject of a
 * rule (a group, a release) fired since it was last on the safe side, and what each firing saw.
 */
const STATE = 'alert_rule_state';
const FIRINGS = 'alert_rule_firings';

export interface Firing {
  id: string;
  ruleId: string;
  projectId: string;
  subject: string;
  groupId: string | null;
  value: number;
  sessions: number | null;
  detail: string | null;
  firedAt: number;
}

export function alertRuleStateRepo(db: Queryable) {
  return {
    async states(ruleId: string): Promise<Map<string, SubjectState>> {
      const r = await db.query<{ subject: string; fired: boolean; last_fired_at: Date | string | null }>(
        `SELECT subject, fired, last_fired_at FROM ${STATE} WHERE rule_id = $1`,
        [ruleId],
      );
      return new Map(
        r.rows.map((x) => [
          x.subject,
          { fired: x.fired, lastFiredAt: x.last_fired_at === null ? null : new Date(x.last_fired_at).getTime() },
        ]),
      );
    },

    async rearm(ruleId: string, subjects: string[]): Promise<void> {
      if (!subjects.length) return;
      await db.query(
        `UPDATE ${STATE} SET fired = false, updated_at = now() WHERE rule_id = $1 AND subject = ANY($2::text[])`,
        [ruleId, subjects],
      );
    },

    async firing(id: string): Promise<Firing | null> {
      const r = await db.query<{
        id: string;
        rule_id: string;
        project_id: string;
        subject: string;
        group_id: string | null;
        value: number;
        sessions: number | null;
        detail: string | null;
        fired_at: Date | string;
      }>(
        `SELECT id, rule_id, project_id, subject, group_id, value, sessions, detail, fired_at FROM ${FIRINGS} WHERE id = $1`,
        [id],
      );
      const x = r.rows[0];
      return x
        ? {
            id: x.id,
            ruleId: x.rule_id,
            projectId: x.project_id,
            subject: x.subject,
            groupId: x.group_id,
            value: Number(x.value),
            sessions: x.sessions,
            detail: x.detail,
            firedAt: new Date(x.fired_at).getTime(),
          }
        : null;
    },
  };
}

/**
 * Marks the subject fired, in the caller's transaction, and records the firing; null when it
 * had already fired (another worker's pass got there first, or the cooldown holds), so two
 * passes racing fire once.
 */
export async function markFired(
  q: Queryable,
  ruleId: string,
  projectId: string,
  m: Measure,
  groupId: string | null,
  cooldownMinutes: number,
): Promise<string | null> {
  const r = await q.query(
    `INSERT INTO ${STATE} (rule_id, subject, fired, last_fired_at, last_value, updated_at) VALUES ($1, $2, true, now(), $3, now())
     ON CONFLICT (rule_id, subject) DO UPDATE SET fired = true, last_fired_at = now(), last_value = EXCLUDED.last_value, updated_at = now()
     WHERE NOT ${STATE}.fired AND (${STATE}.last_fired_at IS NULL OR ${STATE}.last_fired_at <= now() - $4::int * interval '1 minute')
     RETURNING 1`,
    [ruleId, m.subject, m.value, cooldownMinutes],
  );
  if (!r.rows.length) return null;
  const id = randomUUID();
  await q.query(
    `INSERT INTO ${FIRINGS} (id, rule_id, project_id, subject, group_id, value, sessions, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, ruleId, projectId, m.subject, groupId, m.value, m.sessions ?? null, m.detail ?? null],
  );
  return id;
}
