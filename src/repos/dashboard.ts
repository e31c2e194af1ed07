import type { Postgres } from '../stores/postgres/port.ts';
import type { ClickHouse } from '../stores/clickhouse/port.ts';
import { allowedTransitions, type CrashGroupStatus } from '../domain/crashGroupStatus.ts';
import {
  CRASH_GROUP_CORE_COLUMNS, SESSION_CORE_COLUMNS, crashGroupFields, sessionFields,
  type CrashGroupCoreRow, type SessionCoreRow,
} from './shapes.ts';
import { isoMs } from '../domain/exportParams.ts';
import { eventCounts as countEvents } from './exports/events.ts';

/** Read queries behind the dashboard's lists, timeline and chart (project-scoped; access is checked by the caller). */


export interface SessionFilter {
  from?: number;
  to?: number;
  status?: string;
  page: number;
  limit: number;
}

interface SessionRow extends SessionCoreRow {
  model: string | null;
  brand: string | null;
  app_build_number: string | null;
  locale: string | null;
}

const SESSION_COLUMNS = `${SESSION_CORE_COLUMNS}, model, brand, app_build_number, locale`;

const toSession = (r: SessionRow, eventCount: number) => ({
  ...sessionFields(r, eventCount),
  model: r.model,
  brand: r.brand,
  appBuildNumber: r.app_build_number,
  locale: r.locale,
});

interface GroupRow extends CrashGroupCoreRow {
  status: CrashGroupStatus;
  stack_head: string;
  app_versions: string[];
  summary: string | null;
  summary_source: string | null;
}

const GROUP_COLUMNS = `${CRASH_GROUP_CORE_COLUMNS}, stack_head, app_versions, summary, summary_source`;

const toGroup = (g: GroupRow) => ({
  ...crashGroupFields(g),
  status: g.status,
  stackHead: g.stack_head,
  allowedTransitions: allowedTransitions(g.status),
  appVersions: g.app_versions,
  summary: g.summary,
  summarySource: g.summary_source,
});

const envelope = <T>(data: T[], total: number, page: number, limit: number) => ({
  data, total, page, limit, pages: Math.ceil(total / limit),
});

export function dashboardRepo(db: Postgres, ch: ClickHouse) {
  const eventCounts = (projectId: string, sessionIds: string[]) => countEvents(ch, projectId, sessionIds);

  return {
    /** Newest first, the way a person scans recent activity. */
    async sessions(projectId: string, f: SessionFilter) {
      const where = ['project_id = $1'];
      const params: unknown[] = [projectId];
      if (f.from !== undefined) where.push(`started_at >= $${params.push(f.from)}`);
      if (f.to !== undefined) where.push(`started_at < $${params.push(f.to)}`);
      if (f.status) where.push(`status = $${params.push(f.status)}`);
      const w = where.join(' AND ');
      const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE ${w}`, params);
      const rows = await db.query<SessionRow>(
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${w} ORDER BY started_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, f.limit, (f.page - 1) * f.limit],
      );
      const counts = await eventCounts(projectId, rows.rows.map((r) => r.id));
      return envelope(rows.rows.map((r) => toSession(r, counts.get(r.id) ?? 0)), total.rows[0]!.n, f.page, f.limit);
    },

    async session(projectId: string, sessionId: string) {
      const r = await db.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE project_id = $1 AND id = $2`, [projectId, sessionId]);
      if (!r.rows[0]) return null;
      const counts = await eventCounts(projectId, [sessionId]);
      return toSession(r.rows[0], counts.get(sessionId) ?? 0);
    },

    /** The session's crashes with their group, where they happened on the timeline. */
    async sessionCrashes(projectId: string, sessionId: string) {
      const r = await db.query<{ occurred_at: number; is_fatal: boolean; group_id: string | null; message: string | null; status: string | null }>(
        `SELECT o.occurred_at, o.is_fatal, g.id AS group_id, g.message, g.status
         FROM crash_occurrences o LEFT JOIN crash_groups g ON g.project_id = o.project_id AND g.group_key = o.group_key
         WHERE o.project_id = $1 AND o.session_id = $2 ORDER BY o.occurred_at, o.id`,
        [projectId, sessionId],
      );
      return r.rows.map((c) => ({ occurredAt: isoMs(c.occurred_at)!, isFatal: c.is_fatal, groupId: c.group_id, message: c.message, groupStatus: c.status }));
    },

    /** Events in sequence order, keyset-paged on sequenceNumber (a session may have many). */
    async events(projectId: string, sessionId: string, afterSeq: number | undefined, limit: number) {
      const rows = await ch.query<{ sequence_number: number; id: string; type: string; timestamp: string; data: string }>(
        `SELECT sequence_number, id, type, timestamp, data FROM events FINAL
         WHERE project_id = {p:String} AND session_id = {s:String} AND sequence_number > {after:Int64}
         ORDER BY sequence_number LIMIT {limit:UInt32}`,
        { p: projectId, s: sessionId, after: afterSeq ?? -1, limit: limit + 1 },
      );
      const more = rows.length > limit;
      const page = rows.slice(0, limit).map((e) => ({
        id: e.id, type: e.type, sequenceNumber: Number(e.sequence_number), timestamp: e.timestamp, data: JSON.parse(e.data) as Record<string, unknown>,
      }));
      return { data: page, nextAfter: more ? page[page.length - 1]!.sequenceNumber : null };
    },

    async network(projectId: string, sessionId: string, page: number, limit: number) {
      const where = 'project_id = {p:String} AND session_id = {s:String}';
      const params = { p: projectId, s: sessionId };
      const total = await ch.query<{ n: number }>(`SELECT count() AS n FROM network_logs FINAL WHERE ${where}`, params);
      const rows = await ch.query<{ id: string; method: string; url: string; status_code: number | null; duration: number; request_size: number | null; response_size: number | null; error: string | null; timestamp: string }>(
        `SELECT id, method, url, status_code, duration, request_size, response_size, error, timestamp FROM network_logs FINAL
         WHERE ${where} ORDER BY timestamp, id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
        { ...params, limit, offset: (page - 1) * limit },
      );
      const data = rows.map((n) => ({
        id: n.id, method: n.method, url: n.url, statusCode: n.status_code === null ? null : Number(n.status_code), duration: Number(n.duration),
        requestSize: n.request_size === null ? null : Number(n.request_size), responseSize: n.response_size === null ? null : Number(n.response_size),
        error: n.error, timestamp: n.timestamp,
        failed: n.error !== null || (n.status_code !== null && Number(n.status_code) >= 400),
      }));
      return envelope(data, Number(total[0]?.n ?? 0), page, limit);
    },

    /** Most recently seen first. */
    async crashGroups(projectId: string, status: string | undefined, page: number, limit: number) {
      const params: unknown[] = [projectId];
      const w = status ? `project_id = $1 AND status = $${params.push(status)}` : 'project_id = $1';
      const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM crash_groups WHERE ${w}`, params);
      const rows = await db.query<GroupRow>(
        `SELECT ${GROUP_COLUMNS} FROM crash_groups WHERE ${w} ORDER BY last_seen_at DESC, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, limit, (page - 1) * limit],
      );
      return envelope(rows.rows.map(toGroup), total.rows[0]!.n, page, limit);
    },

    async crashGroup(projectId: string, groupId: string) {
      const r = await db.query<GroupRow>(`SELECT ${GROUP_COLUMNS} FROM crash_groups WHERE project_id = $1 AND id = $2`, [projectId, groupId]);
      return r.rows[0] ? toGroup(r.rows[0]) : null;
    },

    /**
     * Sessions started per UTC day in [from, to), and how many of them did not crash (a fatal
     * crash makes a session 'crashed'; handled exceptions do not count against it).
     */
    async daily(projectId: string, from: number, to: number) {
      const r = await db.query<{ day: string; sessions: number; crash_free: number }>(
        `SELECT to_char(to_timestamp(started_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                count(*)::int AS sessions, count(*) FILTER (WHERE status <> 'crashed')::int AS crash_free
         FROM sessions WHERE project_id = $1 AND started_at >= $2 AND started_at < $3 GROUP BY 1 ORDER BY 1`,
        [projectId, from, to],
      );
      const byDay = new Map(r.rows.map((d) => [d.day, d]));
      const out: { day: string; sessions: number; crashFree: number }[] = [];
      for (let t = Math.floor(from / 86_400_000) * 86_400_000; t < to; t += 86_400_000) {
        const day = new Date(t).toISOString().slice(0, 10);
        const d = byDay.get(day);
        out.push({ day, sessions: d?.sessions ?? 0, crashFree: d?.crash_free ?? 0 });
      }
      return out;
    },
  };
}

export type DashboardRepo = ReturnType<typeof dashboardRepo>;
