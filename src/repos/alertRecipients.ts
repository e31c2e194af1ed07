import type { Postgres, Queryable } from '../stores/postgres/port.ts';

/**
 * The Postgres `alert_recipients` table: the addresses of projects' alert lists and whether
 * their owners confirmed them. Only confirmed addresses (and team members' own) get alerts.
 */
const TABLE = 'alert_recipients';
/** Addresses that followed an alert's unsubscribe link, per project. */
const UNSUBSCRIBES = 'alert_unsubscribes';

export interface RecipientState {
  email: string;
  confirmed: boolean;
}

export function alertRecipientsRepo(db: Postgres) {
  return {
    /**
     * Makes the project's rows follow its list: addresses no longer listed are dropped (a later
     * re-listing asks again), new ones are pending, and those in `confirmed` (team members'
     * own addresses, or a list the operator set) are confirmed at once.
     */
    async sync(projectId: string, emails: string[], confirmed: string[]): Promise<void> {
      await db.tx(async (q) => {
        await q.query(`DELETE FROM ${TABLE} WHERE project_id = $1 AND NOT (email = ANY($2::text[]))`, [
          projectId,
          emails,
        ]);
        await q.query(
          `INSERT INTO ${TABLE} (project_id, email, confirmed_at)
           SELECT $1, e, CASE WHEN e = ANY($3::text[]) THEN now() END FROM unnest($2::text[]) AS e
           ON CONFLICT (project_id, email) DO UPDATE
             SET confirmed_at = COALESCE(${TABLE}.confirmed_at, EXCLUDED.confirmed_at)`,
          [projectId, emails, confirmed],
        );
      });
    },

    async ofProject(projectId: string): Promise<RecipientState[]> {
      const r = await db.query<{ email: string; confirmed: boolean }>(
        `SELECT email, confirmed_at IS NOT NULL AS confirmed FROM ${TABLE} WHERE project_id = $1 ORDER BY email`,
        [projectId],
      );
      return r.rows;
    },

    /** The states of several projects' addresses in one query. */
    async ofProjects(projectIds: string[]): Promise<Map<string, RecipientState[]>> {
      const out = new Map<string, RecipientState[]>(projectIds.map((id) => [id, []]));
      if (projectIds.length === 0) return out;
      const r = await db.query<{ project_id: string; email: string; confirmed: boolean }>(
        `SELECT project_id, email, confirmed_at IS NOT NULL AS confirmed FROM ${TABLE} WHERE project_id = ANY($1::uuid[]) ORDER BY email`,
        [projectIds],
      );
      for (const x of r.rows) out.get(x.project_id)?.push({ email: x.email, confirmed: x.confirmed });
      return out;
    },

    /**
     * Pending addresses whose confirmation email has not gone out, leaving out any address
     * that was sent one (for any project) in the last day: listing an address on many
     * projects still mails it at most once a day.
     */
    async unmailed(limit: number): Promise<{ projectId: string; email: string }[]> {
      const r = await db.query<{ project_id: string; email: string }>(
        `SELECT r.project_id, r.email FROM ${TABLE} r
         WHERE r.confirmed_at IS NULL AND r.mailed_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM ${TABLE} o WHERE o.email = r.email AND o.mailed_at > now() - interval '1 day')
         ORDER BY r.created_at LIMIT $1`,
        [limit],
      );
      return r.rows.map((x) => ({ projectId: x.project_id, email: x.email }));
    },

    /** The link's token (its hash) and its expiry, stored before the email is sent. */
    async setToken(projectId: string, email: string, tokenHash: string, ttlMs: number): Promise<void> {
      await db.query(
        `UPDATE ${TABLE} SET token_hash = $3, token_expires_at = now() + $4::int * interval '1 millisecond' WHERE project_id = $1 AND email = $2`,
        [projectId, email, tokenHash, ttlMs],
      );
    },

    async markMailed(projectId: string, email: string): Promise<void> {
      await db.query(`UPDATE ${TABLE} SET mailed_at = now() WHERE project_id = $1 AND email = $2`, [projectId, email]);
    },

    /**
     * Confirms the address whose link carried this token; null for an unknown or expired token.
     * Confirming is asking for the alerts, so it also lifts an earlier unsubscription.
     */
    async confirm(tokenHash: string): Promise<{ projectId: string; email: string } | null> {
      return db.tx(async (q) => {
        const r = await q.query<{ project_id: string; email: string }>(
          `UPDATE ${TABLE} SET confirmed_at = COALESCE(confirmed_at, now()) WHERE token_hash = $1 AND token_expires_at > now() RETURNING project_id, email`,
          [tokenHash],
        );
        const row = r.rows[0];
        if (!row) return null;
        await q.query(`DELETE FROM ${UNSUBSCRIBES} WHERE project_id = $1 AND email = $2`, [row.project_id, row.email]);
        return { projectId: row.project_id, email: row.email };
      });
    },

    /** The address stops getting the project's alerts, whichever rule named it (list, team, default). */
    async unsubscribe(projectId: string, email: string): Promise<void> {
      await db.query(`INSERT INTO ${UNSUBSCRIBES} (project_id, email) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
        projectId,
        email,
      ]);
    },
  };
}

/** The confirmed addresses of a project, for the alert job. */
export async function confirmedRecipients(q: Queryable, projectId: string): Promise<string[]> {
  const r = await q.query<{ email: string }>(
    `SELECT email FROM ${TABLE} WHERE project_id = $1 AND confirmed_at IS NOT NULL`,
    [projectId],
  );
  return r.rows.map((x) => x.email);
}

/** The addresses that unsubscribed from a project's alerts, for the alert job. */
export async function unsubscribedRecipients(q: Queryable, projectId: string): Promise<string[]> {
  const r = await q.query<{ email: string }>(`SELECT email FROM ${UNSUBSCRIBES} WHERE project_id = $1`, [projectId]);
  return r.rows.map((x) => x.email);
}

export type AlertRecipientsRepo = ReturnType<typeof alertRecipientsRepo>;
