import type { Queryable } from '../stores/postgres/port.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { sessionKey, sessionQueries } from './sessions.ts';
import { chTime, OCCURRENCES, type OccurrenceRow } from './crashOccurrences.ts';

/** Postgres tables of the layout before 006_crash_facts.sql, until start-up has copied them. */
const LEGACY_OCCURRENCES = 'crash_occurrences_legacy';
const LEGACY_DEVICES = 'crash_group_devices_legacy';
const GROUPS = 'crash_groups';

/**
 * Copies the occurrences of the Postgres layout before 006_crash_facts.sql into ClickHouse, then
 * drops the old tables, in the caller's transaction (start-up, under the migration lock). Rows
 * written before 005_dashboard.sql had no message, trace or handled flag of their own: they take
 * their group's (message, stack head, handled), and their session's context. A start stopped half-way copies again:
 * the copies are the same rows, which ClickHouse collapses.
 */
export async function moveLegacyOccurrences(q: Queryable, ch: ClickHouse): Promise<number> {
  const exists = await q.query<{ t: string | null }>(`SELECT to_regclass('${LEGACY_OCCURRENCES}')::text AS t`);
  if (!exists.rows[0]?.t) return 0;
  let moved = 0;
  let after: [string, string] = ['', ''];
  for (;;) {
    const r = await q.query<{
      project_id: string;
      id: string;
      group_key: string;
      session_id: string;
      device_fingerprint: string;
      app_version: string | null;
      occurred_at: number;
      is_fatal: boolean;
      message: string | null;
      stack_trace: string | null;
      handled: boolean | null;
      user_id: string | null;
      platform: string | null;
      os_version: string | null;
      brand: string | null;
      model: string | null;
    }>(
      // 005_dashboard.sql gave occurrences their own trace, message and context; older ones take their group's.
      `SELECT o.project_id::text AS project_id, o.id, o.group_key, o.session_id::text AS session_id, o.device_fingerprint, o.app_version,
              o.occurred_at, o.is_fatal, COALESCE(o.message, g.message) AS message, COALESCE(o.stack_trace, g.stack_head) AS stack_trace,
              COALESCE(o.handled, g.handled) AS handled, o.user_id, o.platform, o.os_version, o.brand, o.model
       FROM ${LEGACY_OCCURRENCES} o LEFT JOIN ${GROUPS} g ON g.project_id = o.project_id AND g.group_key = o.group_key
       WHERE (o.project_id::text, o.id) > ($1, $2) ORDER BY o.project_id::text, o.id LIMIT 5000`,
      after,
    );
    const last = r.rows[r.rows.length - 1];
    if (!last) break;
    const sessions = await sessionQueries.forCrashMany(
      q,
      r.rows.map((o) => ({ projectId: o.project_id, sessionId: o.session_id })),
    );
    const rows: OccurrenceRow[] = r.rows.map((o) => {
      const s = sessions.get(sessionKey(o.project_id, o.session_id));
      return {
        project_id: o.project_id,
        group_key: o.group_key,
        id: o.id,
        occurred_at: chTime(Number(o.occurred_at)),
        session_id: o.session_id,
        user_id: o.user_id ?? s?.user_id ?? null,
        device_fingerprint: o.device_fingerprint,
        platform: o.platform ?? s?.platform ?? null,
        os_version: o.os_version ?? s?.os_version ?? null,
        app_version: o.app_version,
        brand: o.brand ?? s?.brand ?? null,
        model: o.model ?? s?.model ?? null,
        message: o.message ?? '',
        stack_trace: o.stack_trace ?? '',
        is_fatal: o.is_fatal,
        handled: o.handled ?? false,
      };
    });
    await ch.insert(OCCURRENCES, rows);
    moved += rows.length;
    after = [last.project_id, last.id];
  }
  await q.query(`DROP TABLE ${LEGACY_OCCURRENCES}`);
  await q.query(`DROP TABLE IF EXISTS ${LEGACY_DEVICES}`);
  return moved;
}
