import type { Postgres } from '../stores/postgres/port.ts';

/** The Postgres `ai_usage` table: AI summary calls per project per UTC day. */
const TABLE = 'ai_usage';

export function aiUsageRepo(db: Postgres) {
  return {
    /** Takes one call of the project's daily budget; false when today's is spent. */
    async take(projectId: string, perDay: number): Promise<boolean> {
      if (perDay <= 0) return false;
      const r = await db.query(
        `INSERT INTO ${TABLE} (project_id, day, calls) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 1)
         ON CONFLICT (project_id, day) DO UPDATE SET calls = ${TABLE}.calls + 1 WHERE ${TABLE}.calls < $2
         RETURNING calls`,
        [projectId, perDay],
      );
      return r.rows.length > 0;
    },
  };
}

export type AiUsageRepo = ReturnType<typeof aiUsageRepo>;
