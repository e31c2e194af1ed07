import { randomUUID } from 'node:crypto';
import type { Queryable } from '../stores/postgres/port.ts';
import { generateApiKey, hashApiKey } from '../domain/apiKey.ts';
import { isoTime } from '../domain/time.ts';

/** The Postgres `api_keys` table: keys are stored as hashes; the plaintext is shown once. */
const TABLE = 'api_keys';

export interface KeyRecord {
  keyId: string;
  projectId: string;
  active: boolean;
}

/** A new key; inside the caller's transaction when the project is created with it. */
export async function insertKey(q: Queryable, projectId: string) {
  const apiKey = generateApiKey();
  const r = await q.query<{ id: string; created_at: Date | string }>(
    `INSERT INTO ${TABLE} (id, project_id, key_hash) VALUES ($1, $2, $3) RETURNING id, created_at`,
    [randomUUID(), projectId, hashApiKey(apiKey)],
  );
  const row = r.rows[0];
  if (!row) throw new Error('INSERT … RETURNING gave no row for a new API key');
  return { key: { id: row.id, createdAt: isoTime(row.created_at) }, apiKey };
}

/**
 * Suspension of a team owner, inside the accounts transaction: every active key of the given
 * projects is turned off and marked as turned off by suspension; lifting it turns back on
 * exactly those. Each returns the hashes of the keys it changed (for the key cache).
 */
export const keysOnSuspension = {
  async suspend(q: Queryable, projectIds: string[]): Promise<string[]> {
    const k = await q.query<{ key_hash: string }>(
      `UPDATE ${TABLE} SET active = false, suspended_at = now(), deactivated_at = now()
       WHERE active AND project_id = ANY($1::uuid[]) RETURNING key_hash`,
      [projectIds],
    );
    return k.rows.map((r) => r.key_hash);
  },

  async unsuspend(q: Queryable, projectIds: string[]): Promise<string[]> {
    const k = await q.query<{ key_hash: string }>(
      `UPDATE ${TABLE} SET active = true, suspended_at = NULL, deactivated_at = NULL
       WHERE suspended_at IS NOT NULL AND project_id = ANY($1::uuid[]) RETURNING key_hash`,
      [projectIds],
    );
    return k.rows.map((r) => r.key_hash);
  },
};

export function apiKeysRepo(db: Queryable) {
  return {
    insert: (projectId: string) => insertKey(db, projectId),

    /**
     * Returns the key's project, or null when no such key. A key turned off by hand stays off
     * when a suspension is lifted, so the suspension mark is cleared.
     */
    async deactivate(keyId: string): Promise<{ projectId: string; keyHash: string } | null> {
      const r = await db.query<{ project_id: string; key_hash: string }>(
        `UPDATE ${TABLE} SET active = false, suspended_at = NULL, deactivated_at = COALESCE(deactivated_at, now()) WHERE id = $1 RETURNING project_id, key_hash`,
        [keyId],
      );
      const row = r.rows[0];
      return row ? { projectId: row.project_id, keyHash: row.key_hash } : null;
    },

    /** The project's keys, newest first (never the plaintext: only its hash is stored). */
    async list(projectId: string) {
      const r = await db.query<{ id: string; active: boolean; created_at: Date | string; deactivated_at: Date | string | null; suspended_at: Date | string | null }>(
        `SELECT id, active, created_at, deactivated_at, suspended_at FROM ${TABLE} WHERE project_id = $1 ORDER BY created_at DESC, id`,
        [projectId],
      );
      return r.rows.map((k) => ({
        id: k.id, active: k.active, createdAt: isoTime(k.created_at), deactivatedAt: isoTime(k.deactivated_at), suspended: k.suspended_at !== null,
      }));
    },

    async findByHash(keyHash: string): Promise<KeyRecord | null> {
      const r = await db.query<{ id: string; project_id: string; active: boolean }>(
        `SELECT id, project_id, active FROM ${TABLE} WHERE key_hash = $1`,
        [keyHash],
      );
      const row = r.rows[0];
      return row ? { keyId: row.id, projectId: row.project_id, active: row.active } : null;
    },
  };
}

export type ApiKeysRepo = ReturnType<typeof apiKeysRepo>;
