import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { lockProjectRow } from './projects.ts';
import { isoTime } from '../lib/time.ts';

/** The Postgres `webhooks` table: a project's endpoints and the secrets that sign their deliveries. */
const TABLE = 'webhooks';

/** A webhook as the API shows it: never its secret. */
export interface Webhook {
  id: string;
  projectId: string;
  url: string;
  events: string[];
  enabled: boolean;
  createdAt: string;
}

interface Row {
  id: string;
  project_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  created_at: Date | string;
}
const COLUMNS = 'id, project_id, url, events, enabled, created_at';
const toWebhook = (r: Row): Webhook => ({
  id: r.id,
  projectId: r.project_id,
  url: r.url,
  events: r.events,
  enabled: r.enabled,
  createdAt: isoTime(r.created_at),
});

export function webhooksRepo(db: Postgres) {
  return {
    /** The new webhook, or null when the project already has `max` webhooks (creates take turns: lockProjectRow). */
    async create(
      projectId: string,
      w: { url: string; events: string[]; secret: string },
      max: number,
    ): Promise<Webhook | null> {
      const r = await db.tx(async (q) => {
        await lockProjectRow(q, projectId);
        return q.query<Row>(
          `INSERT INTO ${TABLE} (id, project_id, url, events, secret)
           SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM ${TABLE} WHERE project_id = $2) < $6
           RETURNING ${COLUMNS}`,
          [randomUUID(), projectId, w.url, w.events, w.secret, max],
        );
      });
      return r.rows[0] ? toWebhook(r.rows[0]) : null;
    },

    async list(projectId: string): Promise<Webhook[]> {
      const r = await db.query<Row>(`SELECT ${COLUMNS} FROM ${TABLE} WHERE project_id = $1 ORDER BY created_at, id`, [
        projectId,
      ]);
      return r.rows.map(toWebhook);
    },

    async update(
      projectId: string,
      id: string,
      p: { url?: string; events?: string[]; enabled?: boolean },
    ): Promise<Webhook | null> {
      const r = await db.query<Row>(
        `UPDATE ${TABLE} SET url = COALESCE($3, url), events = COALESCE($4::text[], events), enabled = COALESCE($5, enabled)
         WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
        [projectId, id, p.url ?? null, p.events ?? null, p.enabled ?? null],
      );
      return r.rows[0] ? toWebhook(r.rows[0]) : null;
    },

    async remove(projectId: string, id: string): Promise<boolean> {
      const r = await db.query(`DELETE FROM ${TABLE} WHERE project_id = $1 AND id = $2`, [projectId, id]);
      return r.rowCount > 0;
    },

    /** Which of these ids are webhooks of the project (a rule may name only its own project's). */
    async existing(projectId: string, ids: string[]): Promise<string[]> {
      if (!ids.length) return [];
      const r = await db.query<{ id: string }>(
        `SELECT id FROM ${TABLE} WHERE project_id = $1 AND id = ANY($2::uuid[])`,
        [projectId, ids],
      );
      return r.rows.map((x) => x.id);
    },

    /**
     * Throttle: one more delivery in the webhook's current minute, or the ms until the minute
     * ends when `perMinute` already started in it. A single conditional UPDATE, so workers share it.
     */
    async takeSlot(id: string, perMinute: number): Promise<number | null> {
      const r = await db.query(
        `UPDATE ${TABLE} SET
           window_count = CASE WHEN window_started_at IS NULL OR window_started_at <= now() - interval '1 minute' THEN 1 ELSE window_count + 1 END,
           window_started_at = CASE WHEN window_started_at IS NULL OR window_started_at <= now() - interval '1 minute' THEN now() ELSE window_started_at END
         WHERE id = $1 AND (window_started_at IS NULL OR window_started_at <= now() - interval '1 minute' OR window_count < $2)
         RETURNING 1`,
        [id, perMinute],
      );
      if (r.rows.length) return null;
      const w = await db.query<{ ms: number | string | null }>(
        `SELECT GREATEST(0, EXTRACT(EPOCH FROM (window_started_at + interval '1 minute' - now())) * 1000) AS ms FROM ${TABLE} WHERE id = $1`,
        [id],
      );
      return Math.ceil(Number(w.rows[0]?.ms ?? 0));
    },
  };
}

/** The endpoint and secret of a delivery's webhook, for the worker that signs and sends it. */
export async function webhookTarget(
  q: Queryable,
  id: string,
): Promise<{ url: string; secret: string; enabled: boolean } | null> {
  const r = await q.query<{ url: string; secret: string; enabled: boolean }>(
    `SELECT url, secret, enabled FROM ${TABLE} WHERE id = $1`,
    [id],
  );
  return r.rows[0] ?? null;
}

/** Whether the project has an enabled webhook that asked for this event. */
export async function hasSubscribers(q: Queryable, projectId: string, event: string): Promise<boolean> {
  const r = await q.query(`SELECT 1 FROM ${TABLE} WHERE project_id = $1 AND enabled AND $2 = ANY(events) LIMIT 1`, [
    projectId,
    event,
  ]);
  return r.rows.length > 0;
}

/** The enabled webhooks of a project that asked for an event, or the given ones (a rule's). */
export async function webhookTargets(
  q: Queryable,
  projectId: string,
  by: { event: string } | { ids: string[] },
): Promise<{ id: string; url: string }[]> {
  const r =
    'event' in by
      ? await q.query<{ id: string; url: string }>(
          `SELECT id, url FROM ${TABLE} WHERE project_id = $1 AND enabled AND $2 = ANY(events) ORDER BY created_at, id`,
          [projectId, by.event],
        )
      : await q.query<{ id: string; url: string }>(
          `SELECT id, url FROM ${TABLE} WHERE project_id = $1 AND enabled AND id = ANY($2::uuid[]) ORDER BY created_at, id`,
          [projectId, by.ids],
        );
  return r.rows;
}

export type WebhooksRepo = ReturnType<typeof webhooksRepo>;

/**
 * Seals the secrets stored before they were encrypted (docs/decisions.md, "Secrets at rest"):
 * run at start-up in the migration lock's transaction; a sealed secret is left as it is.
 */
export async function sealPlaintextSecrets(q: Queryable, seal: (plain: string) => string): Promise<number> {
  const r = await q.query<{ id: string; secret: string }>(
    `SELECT id, secret FROM ${TABLE} WHERE secret NOT LIKE 'enc:v1:%'`,
  );
  for (const row of r.rows) {
    await q.query(`UPDATE ${TABLE} SET secret = $2 WHERE id = $1 AND secret = $3`, [
      row.id,
      seal(row.secret),
      row.secret,
    ]);
  }
  return r.rows.length;
}
