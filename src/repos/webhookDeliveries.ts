import { randomUUID } from 'node:crypto';
import type { Queryable } from '../stores/postgres/port.ts';
import { isoTime } from '../lib/time.ts';
import { enqueueJob, WEBHOOK_JOB } from './outbox.ts';

/** The Postgres `webhook_deliveries` table: the delivery log, one row per event and webhook, updated per attempt. */
const TABLE = 'webhook_deliveries';

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface Delivery {
  id: string;
  webhookId: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  responseCode: number | null;
  latencyMs: number | null;
  error: string | null;
  createdAt: string;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
}

interface Row {
  id: string;
  webhook_id: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  response_code: number | null;
  latency_ms: number | null;
  error: string | null;
  created_at: Date | string;
  last_attempt_at: Date | string | null;
  delivered_at: Date | string | null;
}
const COLUMNS =
  'id, webhook_id, event, status, attempts, response_code, latency_ms, error, created_at, last_attempt_at, delivered_at';
const toDelivery = (r: Row): Delivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  event: r.event,
  status: r.status,
  attempts: r.attempts,
  responseCode: r.response_code,
  latencyMs: r.latency_ms,
  error: r.error,
  createdAt: isoTime(r.created_at),
  lastAttemptAt: isoTime(r.last_attempt_at),
  deliveredAt: isoTime(r.delivered_at),
});

/**
 * Logs a delivery and enqueues its outbox job, inside the caller's transaction: the event and
 * its deliveries commit together, and the outbox's retries and backoff carry each one.
 */
export async function enqueueDelivery(
  q: Queryable,
  projectId: string,
  webhookId: string,
  event: string,
  body: string,
  id: string = randomUUID(),
): Promise<void> {
  // A caller that may repeat (a retried job fanning out) passes an id derived from its own, so the repeat adds nothing.
  const r = await q.query(
    `INSERT INTO ${TABLE} (id, webhook_id, project_id, event, body) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING 1`,
    [id, webhookId, projectId, event, body],
  );
  if (r.rows.length) await enqueueJob(q, projectId, null, WEBHOOK_JOB, id);
}

export function webhookDeliveriesRepo(db: Queryable) {
  return {
    /** The newest deliveries of a project (optionally of one webhook). */
    async list(projectId: string, webhookId: string | undefined, limit: number): Promise<Delivery[]> {
      const r = await db.query<Row>(
        `SELECT ${COLUMNS} FROM ${TABLE} WHERE project_id = $1 AND ($2::uuid IS NULL OR webhook_id = $2) ORDER BY created_at DESC, id LIMIT $3`,
        [projectId, webhookId ?? null, limit],
      );
      return r.rows.map(toDelivery);
    },

    /** What the worker sends. */
    async toSend(
      id: string,
    ): Promise<{ webhookId: string; event: string; body: string; status: DeliveryStatus } | null> {
      const r = await db.query<{ webhook_id: string; event: string; body: string; status: DeliveryStatus }>(
        `SELECT webhook_id, event, body, status FROM ${TABLE} WHERE id = $1`,
        [id],
      );
      const x = r.rows[0];
      return x ? { webhookId: x.webhook_id, event: x.event, body: x.body, status: x.status } : null;
    },

    /** One attempt's outcome. A delivered row stays delivered. */
    async recordAttempt(
      id: string,
      a: { status: DeliveryStatus; responseCode: number | null; latencyMs: number; error: string | null },
    ): Promise<void> {
      await db.query(
        `UPDATE ${TABLE} SET status = $2, attempts = attempts + 1, response_code = $3, latency_ms = $4, error = $5,
           last_attempt_at = now(), delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE delivered_at END
         WHERE id = $1 AND status <> 'delivered'`,
        [id, a.status, a.responseCode, a.latencyMs, a.error],
      );
    },
  };
}

export type WebhookDeliveriesRepo = ReturnType<typeof webhookDeliveriesRepo>;
