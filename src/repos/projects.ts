import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { isoTime } from '../lib/time.ts';
import { insertKey } from './apiKeys.ts';

/** The Postgres `projects` table. */
const TABLE = 'projects';

export interface Project {
  id: string;
  name: string;
  alertEmails: string[] | null;
  createdAt: string;
  /** The owning team; null for a project made through the admin API and not yet given to one. */
  teamId: string | null;
  /** Browser origins that may send to /ingest; null: any (migration 012). */
  allowedOrigins: string[] | null;
  /** The project's own packages, read as app frames by the crash group key (migration 013); empty: none. */
  inAppPackages: string[];
}

interface ProjectRow {
  id: string;
  name: string;
  alert_emails: string[] | null;
  created_at: Date | string;
  team_id: string | null;
  allowed_origins: string[] | null;
  in_app_packages: string[] | null;
}

const COLUMNS = 'id, name, alert_emails, created_at, team_id, allowed_origins, in_app_packages';

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  name: r.name,
  alertEmails: r.alert_emails,
  createdAt: isoTime(r.created_at),
  teamId: r.team_id,
  allowedOrigins: r.allowed_origins ?? null,
  inAppPackages: r.in_app_packages ?? [],
});

/** The fields of a project a change may set; an absent field stays as it is. */
export interface ProjectChange {
  name?: string;
  alertEmails?: string[] | null;
  teamId?: string | null;
  allowedOrigins?: string[] | null;
  inAppPackages?: string[];
}

/**
 * Holds the project's row until the transaction ends, so that a project's capped lists take
 * turns: a count and an insert in one statement read one snapshot, and concurrent creates on a
 * server Postgres would all see the same count and pass the cap together. False: no such project.
 */
export async function lockProjectRow(q: Queryable, projectId: string): Promise<boolean> {
  const r = await q.query(`SELECT id FROM ${TABLE} WHERE id = $1 FOR UPDATE`, [projectId]);
  return r.rows.length > 0;
}

/** The projects of some teams, inside the accounts transaction of a suspension. */
export async function projectIdsOfTeams(q: Queryable, teamIds: string[]): Promise<string[]> {
  const r = await q.query<{ id: string }>(`SELECT id FROM ${TABLE} WHERE team_id = ANY($1::uuid[])`, [teamIds]);
  return r.rows.map((p) => p.id);
}

export function projectsRepo(db: Postgres) {
  return {
    /** teamId: the owning team (dashboard); null for a project made through the admin API. */
    /**
     * The project and its first key (ingest and export); with `appKey`, also an ingest-only key
     * for the app (the one the dashboard's setup snippet shows: a key pulled out of an app exports nothing).
     */
    async createProject(
      name: string,
      teamId: string | null = null,
      keyName: string | null = null,
      createdBy: string | null = null,
      appKey = false,
    ) {
      return db.tx(async (q) => {
        const r = await q.query<ProjectRow>(
          `INSERT INTO ${TABLE} (id, name, team_id) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
          [randomUUID(), name, teamId],
        );
        const row = r.rows[0];
        if (!row) throw new Error('INSERT … RETURNING gave no row for a new project');
        const project = toProject(row);
        const { apiKey, key } = await insertKey(q, project.id, keyName, undefined, false, createdBy);
        const app = appKey ? await insertKey(q, project.id, 'App (ingest only)', ['ingest'], false, createdBy) : null;
        return { project, apiKey, key, ...(app ? { ingestApiKey: app.apiKey, ingestKey: app.key } : {}) };
      });
    },

    async getProject(id: string): Promise<Project | null> {
      const r = await db.query<ProjectRow>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE id = $1`, [id]);
      return r.rows[0] ? toProject(r.rows[0]) : null;
    },

    /** Every project, oldest first (the operator's `projects list`); at most `limit`. */
    async listAll(limit: number): Promise<Project[]> {
      const r = await db.query<ProjectRow>(`SELECT ${COLUMNS} FROM ${TABLE} ORDER BY created_at, id LIMIT $1`, [limit]);
      return r.rows.map(toProject);
    },

    /** The project's own packages for the crash group key (empty for none or an unknown project). */
    async inAppPackages(id: string): Promise<string[]> {
      const r = await db.query<{ in_app_packages: string[] | null }>(
        `SELECT in_app_packages FROM ${TABLE} WHERE id = $1`,
        [id],
      );
      return r.rows[0]?.in_app_packages ?? [];
    },

    async exists(id: string): Promise<boolean> {
      const r = await db.query(`SELECT 1 FROM ${TABLE} WHERE id = $1`, [id]);
      return r.rows.length > 0;
    },

    /** Sets the given fields in one statement; null when there is no such project. */
    async update(id: string, c: ProjectChange): Promise<Project | null> {
      const sets: string[] = [];
      const params: unknown[] = [id];
      if (c.name !== undefined) sets.push(`name = $${params.push(c.name)}`);
      if (c.alertEmails !== undefined) sets.push(`alert_emails = $${params.push(c.alertEmails)}`);
      if (c.teamId !== undefined) sets.push(`team_id = $${params.push(c.teamId)}::uuid`);
      if (c.allowedOrigins !== undefined) sets.push(`allowed_origins = $${params.push(c.allowedOrigins)}::text[]`);
      if (c.inAppPackages !== undefined) sets.push(`in_app_packages = $${params.push(c.inAppPackages)}::text[]`);
      if (sets.length === 0) return this.getProject(id);
      const r = await db.query<ProjectRow>(
        `UPDATE ${TABLE} SET ${sets.join(', ')} WHERE id = $1 RETURNING ${COLUMNS}`,
        params,
      );
      return r.rows[0] ? toProject(r.rows[0]) : null;
    },

    /** The team a project belongs to; null for an unknown project or one made through the admin API. */
    async teamOf(id: string): Promise<string | null> {
      const r = await db.query<{ team_id: string | null }>(`SELECT team_id FROM ${TABLE} WHERE id = $1`, [id]);
      return r.rows[0]?.team_id ?? null;
    },

    /**
     * Alert throttling: takes the project's alert slot when its last alert went out at least
     * `windowMs` ago (or was sent by this same job, retried); returns null when taken, else the
     * milliseconds until the slot frees.
     */
    async claimAlertSlot(id: string, windowMs: number, jobId: number): Promise<number | null> {
      const r = await db.query(
        `UPDATE ${TABLE} SET alert_sent_at = now(), alert_slot_job = $3
         WHERE id = $1 AND (alert_sent_at IS NULL OR alert_sent_at <= now() - $2::int * interval '1 millisecond' OR alert_slot_job = $3)
         RETURNING 1`,
        [id, windowMs, jobId],
      );
      if (r.rows.length) return null;
      const w = await db.query<{ ms: number | string | null }>(
        `SELECT GREATEST(0, EXTRACT(EPOCH FROM (alert_sent_at + $2::int * interval '1 millisecond' - now())) * 1000) AS ms FROM ${TABLE} WHERE id = $1`,
        [id, windowMs],
      );
      return Math.ceil(Number(w.rows[0]?.ms ?? 0));
    },

    /** The projects of these teams, oldest first. */
    async ofTeams(teamIds: string[]): Promise<(Project & { teamId: string })[]> {
      if (teamIds.length === 0) return [];
      const r = await db.query<ProjectRow & { team_id: string }>(
        `SELECT ${COLUMNS} FROM ${TABLE} WHERE team_id = ANY($1::uuid[]) ORDER BY created_at, id`,
        [teamIds],
      );
      return r.rows.map((p) => ({ ...toProject(p), teamId: p.team_id }));
    },
  };
}

export type ProjectsRepo = ReturnType<typeof projectsRepo>;
