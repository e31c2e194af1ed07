import { createHash, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Postgres } from '../stores/postgres/port.ts';
import { isoTime } from '../lib/time.ts';

/**
 * Postgres `release_artifacts`: the source maps, minified sources and R8/ProGuard mappings a
 * project uploads per release, stored gzip'd. Sizes and limits count uncompressed bytes.
 */
const TABLE = 'release_artifacts';

export const ARTIFACT_KINDS = ['sourcemap', 'minified', 'proguard'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

export interface ArtifactInfo {
  id: string;
  release: string;
  kind: ArtifactKind;
  name: string;
  size: number;
  sha256: string;
  createdAt: string;
}

interface ArtifactRow {
  id: string;
  release: string;
  kind: ArtifactKind;
  name: string;
  size_bytes: number | string;
  sha256: string;
  created_at: Date | string;
}

const INFO = 'id, release, kind, name, size_bytes, sha256, created_at';

const toInfo = (r: ArtifactRow): ArtifactInfo => ({
  id: r.id,
  release: r.release,
  kind: r.kind,
  name: r.name,
  size: Number(r.size_bytes),
  sha256: r.sha256,
  createdAt: isoTime(r.created_at) ?? '',
});

const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip);

export type PutResult =
  | { outcome: 'stored'; artifact: ArtifactInfo; replaced: boolean }
  | { outcome: 'over-quota'; usedBytes: number };

export function artifactsRepo(db: Postgres) {
  return {
    /**
     * Stores (or replaces) one artifact, unless the project's artifacts would then pass
     * `projectMaxBytes`: decided under a per-project advisory lock, so two uploads at once cannot
     * both pass the cap.
     */
    async put(
      projectId: string,
      release: string,
      kind: ArtifactKind,
      name: string,
      content: Buffer,
      projectMaxBytes: number,
    ): Promise<PutResult> {
      const packed = await gzip(content);
      const sha256 = createHash('sha256').update(content).digest('hex');
      return db.tx(async (q): Promise<PutResult> => {
        await q.query(`SELECT pg_advisory_xact_lock(hashtext('release_artifacts:' || $1))`, [projectId]);
        const used = await q.query<{ n: string | number }>(
          `SELECT COALESCE(sum(size_bytes), 0) AS n FROM ${TABLE}
           WHERE project_id = $1 AND NOT (release = $2 AND kind = $3 AND name = $4)`,
          [projectId, release, kind, name],
        );
        const usedBytes = Number(used.rows[0]?.n ?? 0);
        if (usedBytes + content.length > projectMaxBytes) return { outcome: 'over-quota', usedBytes };
        const r = await q.query<ArtifactRow & { inserted: boolean }>(
          `INSERT INTO ${TABLE} (id, project_id, release, kind, name, size_bytes, sha256, content)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (project_id, release, kind, name) DO UPDATE
             SET size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256, content = EXCLUDED.content, created_at = now()
           RETURNING ${INFO}, (xmax = 0) AS inserted`,
          [randomUUID(), projectId, release, kind, name, content.length, sha256, packed],
        );
        const row = r.rows[0];
        if (!row) throw new Error('artifact upsert returned no row');
        return { outcome: 'stored', artifact: toInfo(row), replaced: !row.inserted };
      });
    },

    /** The artifacts of the given releases of a project (no content), newest first. */
    async list(projectId: string, releases: readonly string[]): Promise<ArtifactInfo[]> {
      if (releases.length === 0) return [];
      const r = await db.query<ArtifactRow>(
        `SELECT ${INFO} FROM ${TABLE} WHERE project_id = $1 AND release = ANY($2::text[]) ORDER BY created_at DESC, name`,
        [projectId, [...releases]],
      );
      return r.rows.map(toInfo);
    },

    /** One artifact's bytes, uncompressed (null when it was deleted meanwhile). */
    async content(projectId: string, id: string): Promise<Buffer | null> {
      const r = await db.query<{ content: Buffer | Uint8Array }>(
        `SELECT content FROM ${TABLE} WHERE project_id = $1 AND id = $2`,
        [projectId, id],
      );
      const c = r.rows[0]?.content;
      return c ? gunzip(Buffer.from(c)) : null;
    },

    /** Removes a release's artifacts (all of them, or one by kind and name); returns how many. */
    async remove(projectId: string, release: string, one?: { kind: ArtifactKind; name: string }): Promise<number> {
      const r = one
        ? await db.query(`DELETE FROM ${TABLE} WHERE project_id = $1 AND release = $2 AND kind = $3 AND name = $4`, [
            projectId,
            release,
            one.kind,
            one.name,
          ])
        : await db.query(`DELETE FROM ${TABLE} WHERE project_id = $1 AND release = $2`, [projectId, release]);
      return r.rowCount ?? 0;
    },
  };
}

export type ArtifactsRepo = ReturnType<typeof artifactsRepo>;
