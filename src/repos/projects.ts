import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { isoTime } from '../domain/time.ts';
import { insertKey } from './apiKeys.ts';

/** The Postgres `projects` table. */
const TABLE = 'projects';

export interface Project {
  id: string;
  name: string;
  alertEmails: string[] | null;
  createdAt: string;
}

interface ProjectRow {
  id: string;
  name: string;
  alert_emails: string[] | null;
  created_at: Date | string;
}

const COLUMNS = 'id, name, alert_emails, created_at';

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  name: r.name,
  alertEmails: r.alert_emails,
  createdAt: isoTime(r.created_at),
});

/** The projects of some teams, inside the accounts transaction of a suspension. */
export async function projectIdsOfTeams(q: Queryable, teamIds: string[]): Promise<string[]> {
  const r = await q.query<{ id: string }>(`SELECT id FROM ${TABLE} WHERE team_id = ANY($1::uuid[])`, [teamIds]);
  return r.rows.map((p) => p.id);
}

export function projectsRepo(db: Postgres) {
  return {
    /** teamId: the owning team (dashboard); null for a project made through the admin API. */
    async createProject(name: string, teamId: string | null = null) {
      return db.tx(async (q) => {
        const r = await q.query<ProjectRow>(
          `INSERT INTO ${TABLE} (id, name, team_id) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
          [randomUUID(), name, teamId],
        );
        const row = r.rows[0];
        if (!row) throw new Error('INSERT … RETURNING gave no row for a new project');
        const project = toProject(row);
        const { apiKey } = await insertKey(q, project.id);
        return { project, apiKey };
      });
    },

    async getProject(id: string): Promise<Project | null> {
      const r = await db.query<ProjectRow>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE id = $1`, [id]);
      return r.rows[0] ? toProject(r.rows[0]) : null;
    },

    async exists(id: string): Promise<boolean> {
      const r = await db.query(`SELECT 1 FROM ${TABLE} WHERE id = $1`, [id]);
      return r.rows.length > 0;
    },

    async setAlertEmails(id: string, emails: string[] | null): Promise<Project | null> {
      const r = await db.query<ProjectRow>(`UPDATE ${TABLE} SET alert_emails = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, emails]);
      return r.rows[0] ? toProject(r.rows[0]) : null;
    },

    /** The team a project belongs to; null for an unknown project or one made through the admin API. */
    async teamOf(id: string): Promise<string | null> {
      const r = await db.query<{ team_id: string | null }>(`SELECT team_id FROM ${TABLE} WHERE id = $1`, [id]);
      return r.rows[0]?.team_id ?? null;
    },

    /** The projects of these teams, oldest first. */
    async ofTeams(teamIds: string[]): Promise<(Project & { teamId: string })[]> {
      if (teamIds.length === 0) return [];
      const r = await db.query<ProjectRow & { team_id: string }>(
        `SELECT ${COLUMNS}, team_id FROM ${TABLE} WHERE team_id = ANY($1::uuid[]) ORDER BY created_at, id`,
        [teamIds],
      );
      return r.rows.map((p) => ({ ...toProject(p), teamId: p.team_id }));
    },
  };
}

export type ProjectsRepo = ReturnType<typeof projectsRepo>;
