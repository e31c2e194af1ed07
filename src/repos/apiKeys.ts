import { randomUUID } from 'node:crypto';
import type { Queryable } from '../stores/postgres/port.ts';
import {
  DEFAULT_KEY_SCOPES,
  KEY_SCOPES,
  generateApiKey,
  hashApiKey,
  visiblePrefix,
  type KeyScope,
} from '../domain/apiKey.ts';
import { isoTime } from '../lib/time.ts';

/** The Postgres `api_keys` table: keys are stored as hashes; the plaintext is shown once. */
const TABLE = 'api_keys';

export interface KeyRecord {
  keyId: string;
  projectId: string;
  active: boolean;
  scopes: KeyScope[];
  /** The project's allowed browser origins for /ingest (null: any), carried with the key so the hot path asks nothing more. */
  allowedOrigins: string[] | null;
}

const toScopes = (v: string[] | null): KeyScope[] => KEY_SCOPES.filter((s) => (v ?? []).includes(s));

/** A key as its project lists it: never the plaintext, only the visible start a person recognises. */
export interface KeyInfo {
  id: string;
  projectId: string;
  /** `frk_` and the next 4 characters (null for keys made before prefixes were stored). */
  prefix: string | null;
  name: string | null;
  active: boolean;
  /** What the key may do: `ingest` and/or `export`. */
  scopes: KeyScope[];
  createdAt: string;
  deactivatedAt: string | null;
  suspended: boolean;
  /** The account that made the key; null for the operator's keys and keys made before this was kept. */
  createdBy: string | null;
}

interface KeyRow {
  id: string;
  project_id: string;
  prefix: string | null;
  name: string | null;
  active: boolean;
  scopes: string[];
  created_at: Date | string;
  deactivated_at: Date | string | null;
  suspended_at: Date | string | null;
  created_by: string | null;
}

const KEY_COLUMNS =
  'id, project_id, prefix, name, active, scopes, created_at, deactivated_at, suspended_at, created_by';

const toKey = (k: KeyRow): KeyInfo => ({
  id: k.id,
  projectId: k.project_id,
  prefix: k.prefix,
  name: k.name,
  active: k.active,
  scopes: toScopes(k.scopes),
  createdAt: isoTime(k.created_at),
  deactivatedAt: isoTime(k.deactivated_at),
  suspended: k.suspended_at !== null,
  createdBy: k.created_by,
});

/**
 * A new key; inside the caller's transaction when the project is created with it. Its first
 * characters are kept in the clear so a person can tell which key is which (like GitHub's and
 * Stripe's): 4 random characters of 38 give nothing useful to someone who reads the table.
 * A key made while the project's owner is suspended is born off and marked as turned off by
 * the suspension, so lifting it turns the key on like the others.
 */
export async function insertKey(
  q: Queryable,
  projectId: string,
  name: string | null = null,
  scopes: readonly KeyScope[] = DEFAULT_KEY_SCOPES,
  suspended = false,
  createdBy: string | null = null,
) {
  const apiKey = generateApiKey();
  const r = await q.query<KeyRow>(
    `INSERT INTO ${TABLE} (id, project_id, key_hash, prefix, name, scopes, active, suspended_at, deactivated_at, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, NOT $7, CASE WHEN $7 THEN now() END, CASE WHEN $7 THEN now() END, $8)
     RETURNING ${KEY_COLUMNS}`,
    [randomUUID(), projectId, hashApiKey(apiKey), visiblePrefix(apiKey), name, [...scopes], suspended, createdBy],
  );
  const row = r.rows[0];
  if (!row) throw new Error('INSERT … RETURNING gave no row for a new API key');
  const k = toKey(row);
  return {
    key: {
      id: k.id,
      createdAt: k.createdAt,
      prefix: k.prefix,
      name: k.name,
      scopes: k.scopes,
      active: k.active,
      createdBy: k.createdBy,
    },
    apiKey,
  };
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
    insert: (
      projectId: string,
      name: string | null,
      scopes: readonly KeyScope[],
      suspended: boolean,
      createdBy: string | null = null,
    ) => insertKey(db, projectId, name, scopes, suspended, createdBy),

    /**
     * A member left a team: the active keys they made on its projects are turned off
     * ('revoke'; returns their hashes, for the key cache) or handed to `to` ('reassign').
     */
    async ofRemovedMember(
      projectIds: string[],
      memberId: string,
      action: 'revoke' | 'reassign',
      to: string,
    ): Promise<string[]> {
      if (projectIds.length === 0) return [];
      if (action === 'reassign') {
        await db.query(`UPDATE ${TABLE} SET created_by = $3 WHERE project_id = ANY($1::uuid[]) AND created_by = $2`, [
          projectIds,
          memberId,
          to,
        ]);
        return [];
      }
      const r = await db.query<{ key_hash: string }>(
        `UPDATE ${TABLE} SET active = false, suspended_at = NULL, deactivated_at = COALESCE(deactivated_at, now())
         WHERE project_id = ANY($1::uuid[]) AND created_by = $2 AND active RETURNING key_hash`,
        [projectIds, memberId],
      );
      return r.rows.map((x) => x.key_hash);
    },

    /**
     * Returns the key's project, or null when no such key. A key turned off by hand stays off
     * when a suspension is lifted, so the suspension mark is cleared.
     */
    async deactivate(keyId: string, projectId?: string): Promise<{ projectId: string; keyHash: string } | null> {
      // With a project, a key of another project is not found (the dashboard's scoping).
      const r = await db.query<{ project_id: string; key_hash: string }>(
        `UPDATE ${TABLE} SET active = false, suspended_at = NULL, deactivated_at = COALESCE(deactivated_at, now())
         WHERE id = $1 AND ($2::uuid IS NULL OR project_id = $2) RETURNING project_id, key_hash`,
        [keyId, projectId ?? null],
      );
      const row = r.rows[0];
      return row ? { projectId: row.project_id, keyHash: row.key_hash } : null;
    },

    /** The keys of several projects in one query, newest first within each. */
    async listForProjects(projectIds: string[]): Promise<Map<string, KeyInfo[]>> {
      const out = new Map<string, KeyInfo[]>(projectIds.map((id) => [id, []]));
      if (projectIds.length === 0) return out;
      const r = await db.query<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM ${TABLE} WHERE project_id = ANY($1::uuid[]) ORDER BY created_at DESC, id`,
        [projectIds],
      );
      for (const k of r.rows) out.get(k.project_id)?.push(toKey(k));
      return out;
    },

    /** Names a key of this project; null when the project has no such key. */
    async rename(projectId: string, keyId: string, name: string | null): Promise<KeyInfo | null> {
      const r = await db.query<KeyRow>(
        `UPDATE ${TABLE} SET name = $3 WHERE project_id = $1 AND id = $2 RETURNING ${KEY_COLUMNS}`,
        [projectId, keyId, name],
      );
      return r.rows[0] ? toKey(r.rows[0]) : null;
    },

    async findByHash(keyHash: string): Promise<KeyRecord | null> {
      const r = await db.query<{
        id: string;
        project_id: string;
        active: boolean;
        scopes: string[];
        allowed_origins: string[] | null;
      }>(
        `SELECT k.id, k.project_id, k.active, k.scopes, p.allowed_origins
         FROM ${TABLE} k LEFT JOIN projects p ON p.id = k.project_id WHERE k.key_hash = $1`,
        [keyHash],
      );
      const row = r.rows[0];
      return row
        ? {
            keyId: row.id,
            projectId: row.project_id,
            active: row.active,
            scopes: toScopes(row.scopes),
            allowedOrigins: row.allowed_origins ?? null,
          }
        : null;
    },
  };
}

export type ApiKeysRepo = ReturnType<typeof apiKeysRepo>;
