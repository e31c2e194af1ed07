import { randomUUID } from 'node:crypto';
import type { Queryable } from '../stores/postgres/port.ts';
import { isoTime, systemClock, type Clock } from '../lib/time.ts';

/** The Postgres `alert_outbox` table: jobs enqueued with the change that calls for them, run by the worker. */
const TABLE = 'alert_outbox';

/** The job a new crash group enqueues: its summary, then its alert email. */
export const NEW_GROUP_JOB = 'new_crash_group';

/** A resolved group reopened by a new app version: ref is that version (one job per regression). */
export const REGRESSION_JOB = 'crash_group_regressed';

/** A rule fired: its email (ref: the firing). */
export const RULE_EMAIL_JOB = 'rule_fired_email';

/** A new crash group's posts to the project's webhooks that asked for `crash_group.new`. */
export const NEW_GROUP_WEBHOOKS_JOB = 'crash_group_new_webhooks';

/** A regression's posts to the project's webhooks that asked for `crash_group.regressed` (ref: the version). */
export const REGRESSION_WEBHOOKS_JOB = 'crash_group_regressed_webhooks';

/** One webhook delivery (ref: the delivery's id in webhook_deliveries). */
export const WEBHOOK_JOB = 'webhook_delivery';

/** A crash group's alert as the management API shows it. */
export interface AlertState {
  status: string;
  attempts: number;
  lastError: string | null;
  sentAt: string | null;
  note: string | null;
}

/** A claimed job: the lease token fences every write its worker makes. */
export interface OutboxJob {
  id: number;
  projectId: string;
  /** Empty for jobs about no crash group (rule firings, webhook deliveries). */
  groupId: string;
  kind: string;
  /** The job's subject besides the group (REGRESSION_JOB, RULE_EMAIL_JOB, WEBHOOK_JOB). */
  ref: string | null;
  attempts: number;
  leaseToken: string;
  sentAt: string | null;
}

/** A due job at the head of its lane (one webhook, or a project's other jobs), as the fair queue sees it. */
export interface OutboxLaneHead {
  id: number;
  projectId: string;
  /** The webhook a delivery job posts to; null for the other jobs. */
  webhookId: string | null;
  lane: string;
  /** The project's webhook deliveries leased now, by any worker. */
  projectHooksLeased: number;
}

export interface OutboxRow {
  id: number;
  groupId: string;
  kind: string;
  status: 'pending' | 'done' | 'failed';
  attempts: number;
  lastError: string | null;
  sentAt: string | null;
  messageId: string | null;
  note: string | null;
  doneAt: string | null;
}

/** Enqueues inside the caller's transaction, so the job exists exactly when its change committed. */
export async function enqueueJob(
  q: Queryable,
  projectId: string,
  groupId: string | null,
  kind: string,
  ref: string | null = null,
): Promise<void> {
  await q.query(
    `INSERT INTO ${TABLE} (project_id, group_id, kind, ref) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [projectId, groupId, kind, ref],
  );
}

/** A claimed job's columns, as both claims return them. */
const LEASED_COLUMNS = 'o.id, o.project_id, o.group_id, o.kind, o.ref, o.attempts, o.sent_at';

interface LeasedRow {
  id: number;
  project_id: string;
  group_id: string | null;
  kind: string;
  ref: string | null;
  attempts: number;
  sent_at: Date | string | null;
}

const leasedJob = (x: LeasedRow, token: string): OutboxJob => ({
  id: Number(x.id),
  projectId: x.project_id,
  groupId: x.group_id ?? '',
  kind: x.kind,
  ref: x.ref,
  attempts: x.attempts,
  leaseToken: token,
  sentAt: isoTime(x.sent_at),
});

/**
 * The alert outbox: claim with a lease, record each outcome only while holding that lease.
 * Leases and due times are read and set on `clock` (the tests move it), not the database's now().
 */
export function outboxRepo(db: Queryable, clock: Clock = systemClock) {
  return {
    /** Jobs by status, pending ones split by whether an attempt already failed (the metrics' backlog and failures). */
    async backlog(): Promise<{ pending: number; retrying: number; failed: number; oldestPendingSeconds: number }> {
      const r = await db.query<{ pending: number; retrying: number; failed: number; oldest: number | null }>(
        `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
                count(*) FILTER (WHERE status = 'pending' AND attempts > 0)::int AS retrying,
                count(*) FILTER (WHERE status = 'failed')::int AS failed,
                EXTRACT(EPOCH FROM now() - min(created_at) FILTER (WHERE status = 'pending'))::float8 AS oldest
         FROM ${TABLE} WHERE status <> 'done'`,
      );
      const x = r.rows[0];
      return {
        pending: x?.pending ?? 0,
        retrying: x?.retrying ?? 0,
        failed: x?.failed ?? 0,
        oldestPendingSeconds: x?.oldest ?? 0,
      };
    },

    /** The new-group alert job of a crash group, or null when it has none. */
    async alertOf(groupId: string): Promise<AlertState | null> {
      const r = await db.query<{
        status: string;
        attempts: number;
        last_error: string | null;
        sent_at: Date | string | null;
        note: string | null;
      }>(`SELECT status, attempts, last_error, sent_at, note FROM ${TABLE} WHERE group_id = $1 AND kind = $2`, [
        groupId,
        NEW_GROUP_JOB,
      ]);
      const o = r.rows[0];
      return o
        ? {
            status: o.status,
            attempts: o.attempts ?? 0,
            lastError: o.last_error,
            sentAt: isoTime(o.sent_at),
            note: o.note,
          }
        : null;
    },

    /**
     * Claims up to `limit` due jobs for `leaseMs`. SKIP LOCKED lets several workers claim at
     * once without waiting on each other; the lease (locked_until) lets another worker retake a
     * job whose worker died. Counting the attempt at claim time caps a job that kills its worker.
     */
    async claim(limit: number, leaseMs: number, maxAttempts: number): Promise<OutboxJob[]> {
      const token = randomUUID();
      const r = await db.query<LeasedRow>(
        `WITH due AS (
           SELECT id FROM ${TABLE}
           WHERE status = 'pending' AND next_attempt_at <= to_timestamp($5::float8 / 1000) AND attempts < $3
             AND (locked_until IS NULL OR locked_until <= to_timestamp($5::float8 / 1000))
           ORDER BY next_attempt_at, id
           LIMIT $1
           FOR UPDATE SKIP LOCKED
         )
         UPDATE ${TABLE} o
         SET attempts = o.attempts + 1, locked_until = to_timestamp($5::float8 / 1000) + $2::int * interval '1 millisecond', lease_token = $4
         FROM due WHERE o.id = due.id
         RETURNING ${LEASED_COLUMNS}`,
        [limit, leaseMs, maxAttempts, token, clock()],
      );
      return r.rows.map((x) => leasedJob(x, token));
    },

    /**
     * The first due job of each lane, round-robin across projects (each project's oldest lane
     * head first, then each project's second, …): the fair queue's candidates. A lane with a job
     * leased by any worker has none (its jobs run one at a time across workers, in order), and
     * each head carries how many webhook deliveries its project has leased across workers. Read
     * without locks; claimIds takes the ones the worker has room for.
     */
    async laneHeads(limit: number, maxAttempts: number): Promise<OutboxLaneHead[]> {
      const r = await db.query<{
        id: number | string;
        project_id: string;
        webhook_id: string | null;
        lane: string;
        hooks_leased: number;
      }>(
        `WITH jobs AS (
           SELECT o.id, o.project_id, o.next_attempt_at, o.attempts, o.locked_until, d.webhook_id,
                  COALESCE('webhook:' || d.webhook_id::text, 'project:' || o.project_id::text) AS lane,
                  o.locked_until > to_timestamp($3::float8 / 1000) AS leased
           FROM ${TABLE} o
           LEFT JOIN webhook_deliveries d ON d.id = (CASE WHEN o.kind = $4 THEN o.ref::uuid END)
           WHERE o.status = 'pending'
         ), leased AS (
           SELECT project_id, lane, webhook_id FROM jobs WHERE leased
         ), due AS (
           SELECT * FROM jobs
           WHERE next_attempt_at <= to_timestamp($3::float8 / 1000) AND attempts < $2 AND leased IS NOT TRUE
             AND lane NOT IN (SELECT lane FROM leased)
         ), heads AS (
           SELECT *, row_number() OVER (PARTITION BY lane ORDER BY next_attempt_at, id) AS in_lane FROM due
         ), ranked AS (
           SELECT *, row_number() OVER (PARTITION BY project_id ORDER BY next_attempt_at, id) AS in_project
           FROM heads WHERE in_lane = 1
         )
         SELECT id, project_id, webhook_id, lane,
                (SELECT count(*) FROM leased l WHERE l.project_id = ranked.project_id AND l.webhook_id IS NOT NULL)::int AS hooks_leased
         FROM ranked ORDER BY in_project, next_attempt_at, id LIMIT $1`,
        [limit, maxAttempts, clock(), WEBHOOK_JOB],
      );
      return r.rows.map((x) => ({
        id: Number(x.id),
        projectId: x.project_id,
        webhookId: x.webhook_id,
        lane: x.lane,
        projectHooksLeased: x.hooks_leased,
      }));
    },

    /**
     * Claims these jobs for `leaseMs`, those still due and unleased: another worker that took one
     * first has leased it, and the update's condition, read again after its commit, skips it.
     */
    async claimIds(ids: number[], leaseMs: number, maxAttempts: number): Promise<OutboxJob[]> {
      const token = randomUUID();
      const r = await db.query<LeasedRow>(
        `UPDATE ${TABLE} o
         SET attempts = o.attempts + 1, locked_until = to_timestamp($5::float8 / 1000) + $2::int * interval '1 millisecond', lease_token = $4
         WHERE o.id = ANY($1::bigint[]) AND o.status = 'pending' AND o.attempts < $3
           AND o.next_attempt_at <= to_timestamp($5::float8 / 1000)
           AND (o.locked_until IS NULL OR o.locked_until <= to_timestamp($5::float8 / 1000))
         RETURNING ${LEASED_COLUMNS}`,
        [ids, leaseMs, maxAttempts, token, clock()],
      );
      return r.rows.map((x) => leasedJob(x, token));
    },

    /** Keeps a running job's lease; false when the lease was lost (another worker retook it). */
    async extend(job: OutboxJob, leaseMs: number): Promise<boolean> {
      const r = await db.query(
        `UPDATE ${TABLE} SET locked_until = to_timestamp($4::float8 / 1000) + $3::int * interval '1 millisecond'
         WHERE id = $1 AND lease_token = $2 AND status = 'pending'`,
        [job.id, job.leaseToken, leaseMs, clock()],
      );
      return r.rowCount > 0;
    },

    /**
     * The email went out. Written whatever the lease: it only ever prevents a resend.
     */
    async markSent(jobId: number, messageId: string): Promise<void> {
      await db.query(`UPDATE ${TABLE} SET sent_at = COALESCE(sent_at, now()), message_id = $2 WHERE id = $1`, [
        jobId,
        messageId,
      ]);
    },

    /** Whether the job's email went out (perhaps in another job's digest) since it was claimed. */
    async isSent(jobId: number): Promise<boolean> {
      const r = await db.query(`SELECT 1 FROM ${TABLE} WHERE id = $1 AND sent_at IS NOT NULL`, [jobId]);
      return r.rows.length > 0;
    },

    /** The project's new-group jobs still pending whose email has not gone out, oldest first. */
    async unsentAlerts(projectId: string, limit: number): Promise<{ id: number; groupId: string }[]> {
      const r = await db.query<{ id: number | string; group_id: string }>(
        `SELECT id, group_id FROM ${TABLE} WHERE project_id = $1 AND kind = $2 AND status = 'pending' AND sent_at IS NULL ORDER BY id LIMIT $3`,
        [projectId, NEW_GROUP_JOB, limit],
      );
      return r.rows.map((x) => ({ id: Number(x.id), groupId: x.group_id }));
    },

    /** The project's jobs of these kinds still pending whose email has not gone out, oldest first (a digest's lines). */
    async unsentOfKinds(
      projectId: string,
      kinds: string[],
      limit: number,
    ): Promise<{ id: number; kind: string; groupId: string; ref: string | null }[]> {
      const r = await db.query<{ id: number | string; kind: string; group_id: string | null; ref: string | null }>(
        `SELECT id, kind, group_id, ref FROM ${TABLE} WHERE project_id = $1 AND kind = ANY($2::text[]) AND status = 'pending' AND sent_at IS NULL ORDER BY id LIMIT $3`,
        [projectId, kinds, limit],
      );
      return r.rows.map((x) => ({ id: Number(x.id), kind: x.kind, groupId: x.group_id ?? '', ref: x.ref }));
    },

    /** One digest carried these jobs' alerts: each of them finds its email sent. */
    async markSentMany(jobIds: number[], messageId: string): Promise<void> {
      await db.query(
        `UPDATE ${TABLE} SET sent_at = COALESCE(sent_at, now()), message_id = $2 WHERE id = ANY($1::bigint[])`,
        [jobIds, messageId],
      );
    },

    /** Puts the job back until later without spending an attempt (alert throttling). */
    async defer(job: OutboxJob, delayMs: number): Promise<boolean> {
      const r = await db.query(
        `UPDATE ${TABLE} SET locked_until = NULL, attempts = GREATEST(0, attempts - 1),
           next_attempt_at = to_timestamp($4::float8 / 1000) + $3::int * interval '1 millisecond'
         WHERE id = $1 AND lease_token = $2 AND status = 'pending'`,
        [job.id, job.leaseToken, delayMs, clock()],
      );
      return r.rowCount > 0;
    },

    async complete(job: OutboxJob, note: string | null): Promise<boolean> {
      const r = await db.query(
        `UPDATE ${TABLE} SET status = 'done', done_at = now(), locked_until = NULL, note = $3
         WHERE id = $1 AND lease_token = $2 AND status = 'pending'`,
        [job.id, job.leaseToken, note],
      );
      return r.rowCount > 0;
    },

    async retryLater(job: OutboxJob, error: string, delayMs: number): Promise<boolean> {
      const r = await db.query(
        `UPDATE ${TABLE} SET locked_until = NULL, last_error = $3,
           next_attempt_at = to_timestamp($5::float8 / 1000) + $4::int * interval '1 millisecond'
         WHERE id = $1 AND lease_token = $2 AND status = 'pending'`,
        [job.id, job.leaseToken, error, delayMs, clock()],
      );
      return r.rowCount > 0;
    },

    async fail(job: OutboxJob, error: string): Promise<boolean> {
      const r = await db.query(
        `UPDATE ${TABLE} SET status = 'failed', done_at = now(), locked_until = NULL, last_error = $3
         WHERE id = $1 AND lease_token = $2 AND status = 'pending'`,
        [job.id, job.leaseToken, error],
      );
      return r.rowCount > 0;
    },

    /** Jobs whose last allowed attempt died with its worker: their lease ran out, nobody may retake them. */
    async failAbandoned(maxAttempts: number): Promise<number> {
      const r = await db.query(
        `UPDATE ${TABLE} SET status = 'failed', done_at = now(), locked_until = NULL,
           last_error = COALESCE(last_error || '; ', '') || 'retry cap reached: the last attempt did not finish (worker lost)'
         WHERE status = 'pending' AND attempts >= $1 AND (locked_until IS NULL OR locked_until <= to_timestamp($2::float8 / 1000))`,
        [maxAttempts, clock()],
      );
      return r.rowCount;
    },

    async byGroup(groupId: string): Promise<OutboxRow[]> {
      const r = await db.query<{
        id: number;
        group_id: string;
        kind: string;
        status: OutboxRow['status'];
        attempts: number;
        last_error: string | null;
        sent_at: Date | string | null;
        message_id: string | null;
        note: string | null;
        done_at: Date | string | null;
      }>(
        `SELECT id, group_id, kind, status, attempts, last_error, sent_at, message_id, note, done_at FROM ${TABLE} WHERE group_id = $1 ORDER BY id`,
        [groupId],
      );
      return r.rows.map((x) => ({
        id: Number(x.id),
        groupId: x.group_id,
        kind: x.kind,
        status: x.status,
        attempts: x.attempts,
        lastError: x.last_error,
        sentAt: isoTime(x.sent_at),
        messageId: x.message_id,
        note: x.note,
        doneAt: isoTime(x.done_at),
      }));
    },
  };
}

export type OutboxRepo = ReturnType<typeof outboxRepo>;
