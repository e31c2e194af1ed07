import { randomUUID } from 'node:crypto';
import type { Queryable } from '../stores/postgres/port.ts';
import { isoTime } from '../lib/time.ts';
import { lockProjectRow } from './projects.ts';
import type { FingerprintMatch, FingerprintRule } from '../domain/fingerprintRules.ts';

/** The Postgres `fingerprint_rules` table: a project's rules, in their order. */
const TABLE = 'fingerprint_rules';

interface Row {
  id: string;
  project_id: string;
  position: number;
  match: FingerprintMatch | string;
  fingerprint: string[];
  created_at: Date | string;
}
const COLUMNS = 'id, project_id, position, match, fingerprint, created_at';

export type StoredFingerprintRule = FingerprintRule & { position: number };

const toRule = (r: Row): StoredFingerprintRule => ({
  id: r.id,
  projectId: r.project_id,
  position: r.position,
  match: typeof r.match === 'string' ? (JSON.parse(r.match) as FingerprintMatch) : r.match,
  fingerprint: r.fingerprint,
  createdAt: isoTime(r.created_at),
});

export function fingerprintRulesRepo(db: Queryable) {
  return {
    async list(projectId: string): Promise<StoredFingerprintRule[]> {
      const r = await db.query<Row>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE project_id = $1 ORDER BY position, id`, [
        projectId,
      ]);
      return r.rows.map(toRule);
    },

    async get(projectId: string, id: string): Promise<StoredFingerprintRule | null> {
      const r = await db.query<Row>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE project_id = $1 AND id = $2`, [
        projectId,
        id,
      ]);
      return r.rows[0] ? toRule(r.rows[0]) : null;
    },

    async insert(projectId: string, position: number, match: FingerprintMatch, fingerprint: string[]): Promise<string> {
      const id = randomUUID();
      await db.query(
        `INSERT INTO ${TABLE} (id, project_id, position, match, fingerprint) VALUES ($1, $2, $3, $4::jsonb, $5)`,
        [id, projectId, position, JSON.stringify(match), fingerprint],
      );
      return id;
    },

    async replace(projectId: string, id: string, match: FingerprintMatch, fingerprint: string[]): Promise<void> {
      await db.query(`UPDATE ${TABLE} SET match = $3::jsonb, fingerprint = $4 WHERE project_id = $1 AND id = $2`, [
        projectId,
        id,
        JSON.stringify(match),
        fingerprint,
      ]);
    },

    /** Numbers the project's rules 0, 1, 2… in the order given (ids of the project's rules). */
    async renumber(projectId: string, ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await db.query(
        `UPDATE ${TABLE} r SET position = o.pos - 1
         FROM unnest($2::uuid[]) WITH ORDINALITY AS o(id, pos)
         WHERE r.project_id = $1 AND r.id = o.id`,
        [projectId, ids],
      );
    },

    async remove(projectId: string, id: string): Promise<boolean> {
      const r = await db.query(`DELETE FROM ${TABLE} WHERE project_id = $1 AND id = $2`, [projectId, id]);
      return r.rowCount > 0;
    },

    /** Holds the project's row until the transaction ends: rule edits of one project take turns (the cap, the order). */
    lockProject: (projectId: string): Promise<boolean> => lockProjectRow(db, projectId),
  };
}
