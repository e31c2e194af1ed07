import { randomUUID } from 'node:crypto';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { isoMs } from '../lib/time.ts';

/**
 * Postgres `crash_group_history`, `crash_group_assignees` and `crash_group_comments`: what people
 * (and the regression rule) did to a crash group (postgres/010_release_health_and_group_activity.sql).
 */
const HISTORY = 'crash_group_history';
const ASSIGNEES = 'crash_group_assignees';
const COMMENTS = 'crash_group_comments';

/** Who made a change: the management API's token, a dashboard account, or flightrec itself (a regression). */
export interface Actor {
  name: string;
  userId: string | null;
}
export const ADMIN_ACTOR: Actor = { name: 'admin', userId: null };
export const SYSTEM_ACTOR: Actor = { name: 'flightrec', userId: null };

export interface HistoryEntry {
  at: string;
  kind: 'status' | 'regression' | 'assignee' | 'merge';
  fromStatus: string | null;
  toStatus: string | null;
  actor: string;
  actorUserId: string | null;
  appVersion: string | null;
  platform: string | null;
  detail: string | null;
}

export interface NewHistoryEntry {
  projectId: string;
  groupId: string;
  kind: HistoryEntry['kind'];
  fromStatus?: string | null;
  toStatus?: string | null;
  actor: Actor;
  appVersion?: string | null;
  platform?: string | null;
  detail?: string | null;
}

export interface Comment {
  id: string;
  author: string;
  authorUserId: string | null;
  body: string;
  createdAt: string;
}

const nowMs = () => Date.now();

/** Records one entry in the caller's transaction (the status change it describes commits with it). */
export async function recordHistory(q: Queryable, e: NewHistoryEntry): Promise<void> {
  await q.query(
    `INSERT INTO ${HISTORY} (project_id, group_id, at, kind, from_status, to_status, actor, actor_user_id, app_version, platform, detail)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
    [
      e.projectId,
      e.groupId,
      nowMs(),
      e.kind,
      e.fromStatus ?? null,
      e.toStatus ?? null,
      e.actor.name,
      e.actor.userId,
      e.appVersion ?? null,
      e.platform ?? null,
      e.detail ?? null,
    ],
  );
}

export function crashGroupActivityRepo(db: Postgres) {
  return {
    /** Oldest first. */
    async history(projectId: string, groupId: string): Promise<HistoryEntry[]> {
      const r = await db.query<{
        at: number;
        kind: HistoryEntry['kind'];
        from_status: string | null;
        to_status: string | null;
        actor: string;
        actor_user_id: string | null;
        app_version: string | null;
        platform: string | null;
        detail: string | null;
      }>(
        `SELECT at, kind, from_status, to_status, actor, actor_user_id, app_version, platform, detail FROM ${HISTORY}
         WHERE project_id = $1 AND group_id = $2 ORDER BY at, id LIMIT 500`,
        [projectId, groupId],
      );
      return r.rows.map((x) => ({
        at: isoMs(Number(x.at)),
        kind: x.kind,
        fromStatus: x.from_status,
        toStatus: x.to_status,
        actor: x.actor,
        actorUserId: x.actor_user_id,
        appVersion: x.app_version,
        platform: x.platform,
        detail: x.detail,
      }));
    },

    /** Per group, its latest regression and its latest status change by hand (for the badges). */
    async lastMoves(
      projectId: string,
      groupIds: string[],
    ): Promise<Map<string, { regressedAt: number | null; movedByHandAt: number | null }>> {
      if (groupIds.length === 0) return new Map();
      const r = await db.query<{ group_id: string; regressed: number | null; moved: number | null }>(
        `SELECT group_id, max(at) FILTER (WHERE kind = 'regression') AS regressed, max(at) FILTER (WHERE kind = 'status') AS moved
         FROM ${HISTORY} WHERE project_id = $1 AND group_id = ANY($2::uuid[]) GROUP BY group_id`,
        [projectId, groupIds],
      );
      return new Map(
        r.rows.map((x) => [
          x.group_id,
          {
            regressedAt: x.regressed === null ? null : Number(x.regressed),
            movedByHandAt: x.moved === null ? null : Number(x.moved),
          },
        ]),
      );
    },

    /** Distinct groups reopened by a regression, per (app version, platform) of the occurrence that reopened them. */
    async regressionsByRelease(projectId: string): Promise<{ appVersion: string; platform: string; groups: number }[]> {
      const r = await db.query<{ v: string; p: string; n: number }>(
        `SELECT COALESCE(app_version, '') AS v, COALESCE(platform, '') AS p, count(DISTINCT group_id)::int AS n
         FROM ${HISTORY} WHERE project_id = $1 AND kind = 'regression' GROUP BY 1, 2`,
        [projectId],
      );
      return r.rows.map((x) => ({ appVersion: x.v, platform: x.p, groups: Number(x.n) }));
    },

    async assignee(projectId: string, groupId: string): Promise<{ userId: string; assignedAt: string } | null> {
      const r = await db.query<{ user_id: string; assigned_at: number }>(
        `SELECT user_id, assigned_at FROM ${ASSIGNEES} WHERE project_id = $1 AND group_id = $2`,
        [projectId, groupId],
      );
      const x = r.rows[0];
      return x ? { userId: x.user_id, assignedAt: isoMs(Number(x.assigned_at)) } : null;
    },

    /** Sets (or with null clears) the assignee and records the change, in one transaction; false when nothing changed. */
    async assign(
      projectId: string,
      groupId: string,
      userId: string | null,
      actor: Actor,
      label: string | null,
    ): Promise<boolean> {
      return db.tx(async (q) => {
        const cur = await q.query<{ user_id: string }>(
          `SELECT user_id FROM ${ASSIGNEES} WHERE group_id = $1 FOR UPDATE`,
          [groupId],
        );
        if ((cur.rows[0]?.user_id ?? null) === userId) return false;
        if (userId === null) await q.query(`DELETE FROM ${ASSIGNEES} WHERE group_id = $1`, [groupId]);
        else {
          await q.query(
            `INSERT INTO ${ASSIGNEES} (group_id, project_id, user_id, assigned_at) VALUES ($1,$2,$3,$4)
             ON CONFLICT (group_id) DO UPDATE SET user_id = EXCLUDED.user_id, assigned_at = EXCLUDED.assigned_at`,
            [groupId, projectId, userId, nowMs()],
          );
        }
        await recordHistory(q, { projectId, groupId, kind: 'assignee', actor, detail: label });
        return true;
      });
    },

    /** Oldest first. */
    async comments(projectId: string, groupId: string): Promise<Comment[]> {
      const r = await db.query<{
        id: string;
        author: string;
        author_user_id: string | null;
        body: string;
        created_at: number;
      }>(
        `SELECT id, author, author_user_id, body, created_at FROM ${COMMENTS} WHERE project_id = $1 AND group_id = $2
         ORDER BY created_at, id LIMIT 500`,
        [projectId, groupId],
      );
      return r.rows.map((x) => ({
        id: x.id,
        author: x.author,
        authorUserId: x.author_user_id,
        body: x.body,
        createdAt: isoMs(Number(x.created_at)),
      }));
    },

    async addComment(projectId: string, groupId: string, actor: Actor, body: string): Promise<Comment> {
      const c = { id: randomUUID(), createdAt: nowMs() };
      await db.query(
        `INSERT INTO ${COMMENTS} (id, project_id, group_id, author, author_user_id, body, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
        [c.id, projectId, groupId, actor.name, actor.userId, body, c.createdAt],
      );
      return { id: c.id, author: actor.name, authorUserId: actor.userId, body, createdAt: isoMs(c.createdAt) };
    },
  };
}

export type CrashGroupActivityRepo = ReturnType<typeof crashGroupActivityRepo>;
