import { randomUUID } from 'node:crypto';
import type { Postgres } from '../stores/postgres/port.ts';
import { generateApiKey, hashApiKey } from '../domain/apiKey.ts';

export interface Project {
  id: string;
  name: string;
  alertEmails: string[] | null;
  createdAt: string;
}

export interface KeyRecord {
  keyId: string;
  projectId: string;
  active: boolean;
}

const toProject = (r: { id: string; name: string; alert_emails: string[] | null; created_at: Date | string }): Project => ({
  id: r.id,
  name: r.name,
  alertEmails: r.alert_emails,
  createdAt: new Date(r.created_at).toISOString(),
});

export function projectsRepo(db: Postgres) {
  async function insertKey(q: Pick<Postgres, 'query'>, projectId: string) {
    const apiKey = generateApiKey();
    const r = await q.query<{ id: string; created_at: Date | string }>(
      'INSERT INTO api_keys (id, project_id, key_hash) VALUES ($1, $2, $3) RETURNING id, created_at',
      [randomUUID(), projectId, hashApiKey(apiKey)],
    );
    const row = r.rows[0]!;
    return { key: { id: row.id, createdAt: new Date(row.created_at).toISOString() }, apiKey };
  }

  return {
    /** teamId: the owning team (dashboard); null for a project made through the admin API. */
    async createProject(name: string, teamId: string | null = null) {
      return db.tx(async (q) => {
        const r = await q.query<Parameters<typeof toProject>[0]>(
          'INSERT INTO projects (id, name, team_id) VALUES ($1, $2, $3) RETURNING id, name, alert_emails, created_at',
          [randomUUID(), name, teamId],
        );
        const project = toProject(r.rows[0]!);
        const { apiKey } = await insertKey(q, project.id);
        return { project, apiKey };
      });
    },

    async getProject(id: string): Promise<Project | null> {
      const r = await db.query<Parameters<typeof toProject>[0]>(
        'SELECT id, name, alert_emails, created_at FROM projects WHERE id = $1',
        [id],
      );
      return r.rows[0] ? toProject(r.rows[0]) : null;
    },

    async setAlertEmails(id: string, emails: string[] | null): Promise<Project | null> {
      const r = await db.query<Parameters<typeof toProject>[0]>(
        'UPDATE projects SET alert_emails = $2 WHERE id = $1 RETURNING id, name, alert_emails, created_at',
        [id, emails],
      );
      return r.rows[0] ? toProject(r.rows[0]) : null;
    },

    /** A new key for an existing project, or null when the project does not exist. */
    async createKey(projectId: string) {
      const exists = await db.query('SELECT 1 FROM projects WHERE id = $1', [projectId]);
      if (!exists.rows.length) return null;
      return insertKey(db, projectId);
    },

    /**
     * Returns the key's project, or null when no such key. A key turned off by hand stays off
     * when a suspension is lifted, so the suspension mark is cleared.
     */
    async deactivateKey(keyId: string): Promise<{ projectId: string; keyHash: string } | null> {
      const r = await db.query<{ project_id: string; key_hash: string }>(
        'UPDATE api_keys SET active = false, suspended_at = NULL, deactivated_at = COALESCE(deactivated_at, now()) WHERE id = $1 RETURNING project_id, key_hash',
        [keyId],
      );
      return r.rows[0] ? { projectId: r.rows[0].project_id, keyHash: r.rows[0].key_hash } : null;
    },

    /** The project's keys, newest first (never the plaintext: only its hash is stored). */
    async listKeys(projectId: string) {
      const r = await db.query<{ id: string; active: boolean; created_at: Date | string; deactivated_at: Date | string | null; suspended_at: Date | string | null }>(
        'SELECT id, active, created_at, deactivated_at, suspended_at FROM api_keys WHERE project_id = $1 ORDER BY created_at DESC, id',
        [projectId],
      );
      const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
      return r.rows.map((k) => ({
        id: k.id, active: k.active, createdAt: iso(k.created_at)!, deactivatedAt: iso(k.deactivated_at), suspended: k.suspended_at !== null,
      }));
    },

    async findKeyByHash(keyHash: string): Promise<KeyRecord | null> {
      const r = await db.query<{ id: string; project_id: string; active: boolean }>(
        'SELECT id, project_id, active FROM api_keys WHERE key_hash = $1',
        [keyHash],
      );
      const row = r.rows[0];
      return row ? { keyId: row.id, projectId: row.project_id, active: row.active } : null;
    },
  };
}

export type ProjectsRepo = ReturnType<typeof projectsRepo>;
