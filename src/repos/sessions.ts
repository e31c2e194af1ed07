import { validEnvironment } from '../domain/crashContext.ts';
import type { Postgres, Queryable } from '../stores/postgres/port.ts';
import { decideEnd, statusAfterEnd, statusSetByCrash, type SessionStatus } from '../domain/sessionState.ts';
import type { SessionStart } from '../domain/session.ts';
import { deviceFingerprint } from '../domain/crashGrouping.ts';
import { isoMs, utcDaysOf } from '../lib/time.ts';
import { pageEnvelope } from '../domain/paging.ts';
import { InvalidParameterError } from '../domain/errors.ts';
import { pgResource, PG_NOW_MS } from './exportCore/postgres.ts';
import type { ParquetColumn } from './exportCore/parquet.ts';
import type { ChangeFilter, DateFilter } from './exportCore/types.ts';

/** The Postgres `sessions` table: ingestion's writes, the export, the dashboard's reads. */
const TABLE = 'sessions';

// The contract's session fields, built in one place: the export and the dashboard add their
// own extras around these.
interface SessionCoreRow {
  id: string;
  user_id: string | null;
  status: string;
  platform: string | null;
  os_version: string | null;
  app_version: string | null;
  network_type: string | null;
  has_crash: boolean;
  has_network_errors: boolean;
  started_at: number;
  ended_at: number | null;
}

const CORE_COLUMNS =
  'id, user_id, status, platform, os_version, app_version, network_type, has_crash, has_network_errors, started_at, ended_at';

function sessionFields(r: SessionCoreRow, eventCount: number) {
  return {
    id: r.id,
    userId: r.user_id,
    status: r.status,
    platform: r.platform,
    osVersion: r.os_version,
    appVersion: r.app_version,
    networkType: r.network_type,
    eventCount,
    hasCrash: r.has_crash,
    hasNetworkErrors: r.has_network_errors,
    // an active session has no duration: it is left out of analytics
    duration: r.ended_at === null ? null : Number(r.ended_at) - Number(r.started_at),
    startedAt: isoMs(r.started_at),
    endedAt: isoMs(r.ended_at),
  };
}

export const SESSION_FIELDS = [
  'id',
  'userId',
  'status',
  'platform',
  'osVersion',
  'appVersion',
  'networkType',
  'eventCount',
  'hasCrash',
  'hasNetworkErrors',
  'duration',
  'startedAt',
  'endedAt',
  'updatedAt',
] as const;

const str = (name: string, nullable = true): ParquetColumn => ({ name, type: 'string', nullable });
const SESSION_PARQUET: ParquetColumn[] = [
  str('id', false),
  str('userId'),
  str('status', false),
  str('platform'),
  str('osVersion'),
  str('appVersion'),
  str('networkType'),
  { name: 'eventCount', type: 'int64', nullable: false },
  { name: 'hasCrash', type: 'boolean', nullable: false },
  { name: 'hasNetworkErrors', type: 'boolean', nullable: false },
  { name: 'duration', type: 'int64', nullable: true },
  { name: 'startedAt', type: 'timestamp', nullable: false },
  { name: 'endedAt', type: 'timestamp', nullable: true },
  { name: 'updatedAt', type: 'timestamp', nullable: false },
];

/** The sessions export's filter: a startedAt range, and optionally a change window. */
export type SessionExportFilter = DateFilter & ChangeFilter;

// Every write of an exported field sets this (docs/export.md, "Incremental sync").
const STAMP = `updated_at = ${PG_NOW_MS}`;

interface DetailRow extends SessionCoreRow {
  model: string | null;
  brand: string | null;
  app_build_number: string | null;
  locale: string | null;
}

const DETAIL_COLUMNS = `${CORE_COLUMNS}, model, brand, app_build_number, locale`;

const toDetail = (r: DetailRow, eventCount: number) => ({
  ...sessionFields(r, eventCount),
  model: r.model,
  brand: r.brand,
  appBuildNumber: r.app_build_number,
  locale: r.locale,
});

export const SESSION_SORTS = ['started', 'duration', 'events'] as const;
export type SessionSort = (typeof SESSION_SORTS)[number];

export interface SessionListFilter {
  from?: number;
  to?: number;
  status?: string;
  /** A user id (exact or its start, any case) or the start of a session id. */
  search?: string;
  platform?: string;
  appVersion?: string;
  hasCrash?: boolean;
  hasNetworkErrors?: boolean;
  sort?: SessionSort;
  order?: 'asc' | 'desc';
  page: number;
  limit: number;
}

/**
 * Sorting by event count needs the counts of every matching session, and they live in
 * ClickHouse: past this many matches the list asks for narrower filters instead.
 */
export const MAX_SESSIONS_SORTED_BY_EVENTS = 20_000;

const likePrefix = (s: string) => `${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** What a crash report reads of its session: its flags and the context its occurrence copies. */
export interface CrashingSession {
  status: SessionStatus;
  has_crash: boolean;
  user_id: string | null;
  app_version: string | null;
  platform: string | null;
  os_version: string | null;
  brand: string | null;
  model: string | null;
  device_fingerprint: string;
  app_build_number: string | null;
  network_type: string | null;
  /** release health counts a crash in the hour its session started */
  started_at: number;
  /** the session's environment; a crash report naming none takes it */
  environment?: string | null;
}

const CRASHING_COLUMNS =
  'status, has_crash, user_id, app_version, platform, os_version, brand, model, device_fingerprint, ' +
  'app_build_number, network_type, started_at, environment';

/** A session as release health counts it (repos/sessionFacts.ts). */
export interface SessionFactSource {
  project_id: string;
  id: string;
  started_at: number;
  app_version: string | null;
  platform: string | null;
  user_id: string | null;
  device_fingerprint: string;
  status: SessionStatus;
  /** null: the session started without one (or before sessions had one) */
  environment?: string | null;
  /** the device context crash suspects compare against (clickhouse/009_crash_suspects.sql) */
  os_version?: string | null;
  brand?: string | null;
  model?: string | null;
  network_type?: string | null;
}

const FACT_COLUMNS = `project_id::text AS project_id, id::text AS id, started_at, app_version, platform, user_id, device_fingerprint,
  status, environment, os_version, brand, model, network_type`;

/** Counts of stored events per session: they live in another store (ClickHouse). */
export type EventCounts = (projectId: string, sessionIds: string[]) => Promise<Map<string, number>>;

/**
 * Reads and writes of a session made from another aggregate's transaction (a crash report
 * reads its session, then flags it) or from the worker process, which has no ClickHouse.
 */
/** A session within its project, as `forCrashMany`'s answer holds it (its SQL spells the same). */
export const sessionKey = (projectId: string, sessionId: string) => `${projectId}:${sessionId}`;

export const sessionQueries = {
  /** Read without a lock: a crash storm from one session must not queue on its row. */
  async forCrash(q: Queryable, projectId: string, sessionId: string): Promise<CrashingSession | null> {
    const s = await q.query<CrashingSession>(
      `SELECT ${CRASHING_COLUMNS} FROM ${TABLE} WHERE project_id = $1 AND id = $2`,
      [projectId, sessionId],
    );
    return s.rows[0] ?? null;
  },

  /** Sessions by (project, id), for occurrences copied in bulk. */
  async forCrashMany(
    q: Queryable,
    keys: { projectId: string; sessionId: string }[],
  ): Promise<Map<string, CrashingSession>> {
    if (keys.length === 0) return new Map();
    // A storm's batch is many reports of few sessions: each session read once.
    const unique = [...new Map(keys.map((k) => [sessionKey(k.projectId, k.sessionId), k])).values()];
    const r = await q.query<CrashingSession & { k: string }>(
      `SELECT s.project_id::text || ':' || s.id::text AS k, ${CRASHING_COLUMNS.split(', ')
        .map((c) => `s.${c}`)
        .join(', ')}
       FROM ${TABLE} s JOIN unnest($1::uuid[], $2::uuid[]) AS x(p, id) ON s.project_id = x.p AND s.id = x.id`,
      [unique.map((k) => k.projectId), unique.map((k) => k.sessionId)],
    );
    return new Map(r.rows.map((x) => [x.k, x]));
  },

  /**
   * Flags a crash: the status is the domain's (statusSetByCrash in src/domain/sessionState.ts,
   * null: unchanged), applied in SQL against the row as it is when locked, so a concurrent
   * session end is neither lost nor undone; a row already flagged is not written. A fatal crash
   * of a session with no end gives it a provisional one at the crash's time (never before its
   * start), which the first explicit end replaces (decideEnd); a handled error ends nothing.
   */
  async markCrashed(q: Queryable, projectId: string, sessionId: string, isFatal: boolean, at: number): Promise<void> {
    await q.query(
      `UPDATE ${TABLE} SET has_crash = true, status = COALESCE($5::text, status),
         end_provisional = CASE WHEN $3 AND ended_at IS NULL THEN true ELSE end_provisional END,
         ended_at = CASE WHEN $3 AND ended_at IS NULL THEN GREATEST(started_at, $4::bigint) ELSE ended_at END, ${STAMP}
       WHERE project_id = $1 AND id = $2 AND (NOT has_crash OR status <> COALESCE($5::text, status))`,
      [projectId, sessionId, isFatal, at, statusSetByCrash(isFatal)],
    );
  },

  /**
   * markCrashed for a batch of crashes in one statement: one entry per session (fatal when any
   * of its crashes was, at the earliest fatal one's time), rows written in key order.
   */
  async markCrashedMany(
    q: Queryable,
    xs: { projectId: string; sessionId: string; isFatal: boolean; at: number }[],
  ): Promise<void> {
    if (xs.length === 0) return;
    const one = new Map<string, { projectId: string; sessionId: string; isFatal: boolean; at: number }>();
    for (const x of xs) {
      const k = sessionKey(x.projectId, x.sessionId);
      const y = one.get(k);
      if (!y) one.set(k, { ...x });
      else if (x.isFatal && (!y.isFatal || x.at < y.at)) one.set(k, { ...x });
    }
    const rows = [...one.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
    await q.query(
      `UPDATE ${TABLE} s SET has_crash = true, status = CASE WHEN x.fatal THEN 'crashed' ELSE s.status END,
         end_provisional = CASE WHEN x.fatal AND s.ended_at IS NULL THEN true ELSE s.end_provisional END,
         ended_at = CASE WHEN x.fatal AND s.ended_at IS NULL THEN GREATEST(s.started_at, x.at) ELSE s.ended_at END, ${STAMP}
       FROM unnest($1::uuid[], $2::uuid[], $3::boolean[], $4::bigint[]) AS x(p, id, fatal, at)
       WHERE s.project_id = x.p AND s.id = x.id AND (NOT s.has_crash OR (x.fatal AND s.status <> 'crashed'))`,
      [rows.map((r) => r.projectId), rows.map((r) => r.sessionId), rows.map((r) => r.isFatal), rows.map((r) => r.at)],
    );
  },

  /** What release health counts of a session (the start-up backfill of session facts reads them in key order). */
  async factsAfter(
    q: Queryable,
    after: { projectId: string; sessionId: string } | null,
    limit: number,
  ): Promise<SessionFactSource[]> {
    const r = await q.query<SessionFactSource>(
      `SELECT ${FACT_COLUMNS} FROM ${TABLE}
       ${after ? 'WHERE (project_id, id) > ($2::uuid, $3::uuid)' : ''} ORDER BY project_id, id LIMIT $1`,
      after ? [limit, after.projectId, after.sessionId] : [limit],
    );
    return r.rows;
  },

  /** The device a session reported, for a crash alert. */
  async deviceOf(q: Queryable, projectId: string, sessionId: string) {
    const r = await q.query<{
      platform: string | null;
      app_version: string | null;
      os_version: string | null;
      app_build_number: string | null;
      model: string | null;
      brand: string | null;
    }>(
      `SELECT platform, app_version, os_version, app_build_number, model, brand FROM ${TABLE} WHERE project_id = $1 AND id = $2`,
      [projectId, sessionId],
    );
    return r.rows[0] ?? null;
  },
};

export function sessionsRepo(
  db: Postgres,
  eventCounts: EventCounts,
  opts: { changeLagMs: number } = { changeLagMs: 0 },
) {
  return {
    /** A crash report's read of its session (sessionQueries.forCrash). */
    forCrash: (projectId: string, sessionId: string) => sessionQueries.forCrash(db, projectId, sessionId),
    /** Many crash reports' reads of their sessions, by `project:session` (sessionQueries.forCrashMany). */
    forCrashMany: (keys: { projectId: string; sessionId: string }[]) => sessionQueries.forCrashMany(db, keys),
    /** Flags a crash on the session (sessionQueries.markCrashed). */
    markCrashed: (projectId: string, sessionId: string, isFatal: boolean, at: number) =>
      sessionQueries.markCrashed(db, projectId, sessionId, isFatal, at),

    /** The session as release health counts it (a repeated start, a crash). */
    async factOf(projectId: string, sessionId: string): Promise<SessionFactSource | null> {
      const r = await db.query<SessionFactSource>(
        `SELECT ${FACT_COLUMNS} FROM ${TABLE} WHERE project_id = $1 AND id = $2`,
        [projectId, sessionId],
      );
      return r.rows[0] ?? null;
    },

    /** Idempotent on (project, sessionId): a repeat is silently ignored. True when this call created it. */
    async start(projectId: string, s: SessionStart): Promise<boolean> {
      const d = s.device;
      const r = await db.query(
        `INSERT INTO ${TABLE} (project_id, id, user_id, platform, os_version, model, brand, app_version,
           app_build_number, sdk_version, locale, timezone, screen_width, screen_height, network_type,
           device_fingerprint, started_at, environment)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18)
         ON CONFLICT (project_id, id) DO NOTHING`,
        [
          projectId,
          s.sessionId,
          s.userId ?? null,
          d.platform ?? null,
          d.osVersion ?? null,
          d.model ?? null,
          d.brand ?? null,
          d.appVersion ?? null,
          d.appBuildNumber ?? null,
          d.sdkVersion ?? null,
          d.locale ?? null,
          d.timezone ?? null,
          d.screenWidth ?? null,
          d.screenHeight ?? null,
          d.networkType ?? null,
          deviceFingerprint(d),
          s.startedAt,
          validEnvironment(s.environment),
        ],
      );
      return (r.rowCount ?? 0) > 0;
    },

    async exists(projectId: string, sessionId: string): Promise<boolean> {
      const r = await db.query(`SELECT 1 FROM ${TABLE} WHERE project_id = $1 AND id = $2`, [projectId, sessionId]);
      return r.rows.length > 0;
    },

    /** 'ok' also covers an unknown session and a session already ended (retries are safe). */
    async end(projectId: string, sessionId: string, endedAt: number): Promise<'ok' | 'before-start'> {
      return db.tx(async (q) => {
        const r = await q.query<{
          started_at: number;
          ended_at: number | null;
          end_provisional: boolean;
          status: SessionStatus;
        }>(
          `SELECT started_at, ended_at, end_provisional, status FROM ${TABLE} WHERE project_id = $1 AND id = $2 FOR UPDATE`,
          [projectId, sessionId],
        );
        const row = r.rows[0];
        if (!row) return 'ok';
        const decision = decideEnd(
          { startedAt: Number(row.started_at), endedAt: row.ended_at, provisional: row.end_provisional },
          endedAt,
        );
        if (decision === 'before-start') return 'before-start';
        if (decision === 'apply') {
          await q.query(
            `UPDATE ${TABLE} SET ended_at = $3, end_provisional = false, status = $4, ${STAMP} WHERE project_id = $1 AND id = $2`,
            [projectId, sessionId, endedAt, statusAfterEnd(row.status)],
          );
        }
        return 'ok';
      });
    },

    /** Sets the sessions' flag, once each (a session already flagged keeps its updatedAt); the count changed. */
    async markNetworkErrors(sessions: readonly { projectId: string; sessionId: string }[]): Promise<number> {
      if (sessions.length === 0) return 0;
      const r = await db.query(
        `UPDATE ${TABLE} s SET has_network_errors = true, ${STAMP}
         FROM unnest($1::uuid[], $2::uuid[]) AS x(project_id, id)
         WHERE s.project_id = x.project_id AND s.id = x.id AND NOT s.has_network_errors`,
        [sessions.map((x) => x.projectId), sessions.map((x) => x.sessionId)],
      );
      return r.rowCount;
    },

    /**
     * Marks sessions changed because their events (eventCount, read from ClickHouse) changed.
     * Called by services/sessionTouches.ts, coalesced: at most once per session per interval.
     */
    async touch(projectId: string, sessionIds: readonly string[]): Promise<void> {
      if (sessionIds.length === 0) return;
      await db.query(`UPDATE ${TABLE} SET ${STAMP} WHERE project_id = $1 AND id = ANY($2::uuid[])`, [
        projectId,
        sessionIds,
      ]);
    },

    /**
     * Sessions by (startedAt, id), filtered on startedAt, or by (updatedAt, id) with a change
     * window; eventCount comes from the event store.
     */
    export: pgResource<SessionExportFilter, SessionCoreRow & { updated_at: number } & Record<string, unknown>>(
      db,
      {
        name: 'sessions',
        fields: SESSION_FIELDS,
        parquet: SESSION_PARQUET,
        table: TABLE,
        columns: `${CORE_COLUMNS}, updated_at`,
        key: ['started_at', 'id'],
        where(f, params) {
          let w = '';
          if (f.fromMs !== undefined) {
            params.push(f.fromMs);
            w += ` AND started_at >= $${params.length}`;
          }
          if (f.toMsExclusive !== undefined) {
            params.push(f.toMsExclusive);
            w += ` AND started_at < $${params.length}`;
          }
          return w;
        },
        async shape(projectId, rows) {
          const counts = await eventCounts(
            projectId,
            rows.map((r) => r.id),
          );
          return rows.map((r) => ({ ...sessionFields(r, counts.get(r.id) ?? 0), updatedAt: isoMs(r.updated_at) }));
        },
      },
      { lagMs: opts.changeLagMs },
    ),

    /**
     * Newest first by default, the way a person scans recent activity; also by duration (active
     * sessions, which have none, last) or by event count.
     */
    async list(projectId: string, f: SessionListFilter) {
      const where = ['project_id = $1'];
      const params: unknown[] = [projectId];
      if (f.from !== undefined) where.push(`started_at >= $${params.push(f.from)}`);
      if (f.to !== undefined) where.push(`started_at < $${params.push(f.to)}`);
      if (f.status) where.push(`status = $${params.push(f.status)}`);
      if (f.platform) where.push(`platform = $${params.push(f.platform)}`);
      if (f.appVersion) where.push(`app_version = $${params.push(f.appVersion)}`);
      if (f.hasCrash !== undefined) where.push(`has_crash = $${params.push(f.hasCrash)}`);
      if (f.hasNetworkErrors !== undefined) where.push(`has_network_errors = $${params.push(f.hasNetworkErrors)}`);
      if (f.search) {
        const like = likePrefix(f.search.trim());
        where.push(`(user_id ILIKE $${params.push(like)} OR id::text LIKE lower($${params.length}))`);
      }
      const w = where.join(' AND ');
      const total =
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${TABLE} WHERE ${w}`, params)).rows[0]?.n ?? 0;
      const dir = f.order === 'asc' ? 'ASC' : 'DESC';
      const offset = (f.page - 1) * f.limit;

      if (f.sort === 'events') {
        if (total > MAX_SESSIONS_SORTED_BY_EVENTS) {
          throw new InvalidParameterError(
            `Sorting by events covers at most ${MAX_SESSIONS_SORTED_BY_EVENTS.toLocaleString('en')} sessions: narrow the filters (dates, status, version)`,
          );
        }
        // Every matching id (bounded above), their counts in one ClickHouse query, then one page.
        const ids = (
          await db.query<{ id: string }>(`SELECT id FROM ${TABLE} WHERE ${w} ORDER BY started_at DESC, id DESC`, params)
        ).rows.map((r) => r.id);
        const counts = await eventCounts(projectId, ids);
        const sign = dir === 'ASC' ? 1 : -1;
        const pageIds = ids
          .map((id, i) => ({ id, i, n: counts.get(id) ?? 0 }))
          .sort((a, b) => sign * (a.n - b.n) || a.i - b.i)
          .slice(offset, offset + f.limit)
          .map((x) => x.id);
        const rows = await db.query<DetailRow>(
          `SELECT ${DETAIL_COLUMNS} FROM ${TABLE} WHERE project_id = $1 AND id = ANY($2::uuid[])`,
          [projectId, pageIds],
        );
        const byId = new Map(rows.rows.map((r) => [r.id, r]));
        const data = pageIds.flatMap((id) => {
          const r = byId.get(id);
          return r ? [toDetail(r, counts.get(id) ?? 0)] : [];
        });
        return pageEnvelope(data, total, f.page, f.limit);
      }

      const order =
        f.sort === 'duration'
          ? `(ended_at - started_at) ${dir} NULLS LAST, started_at DESC, id DESC`
          : `started_at ${dir}, id ${dir}`;
      const rows = await db.query<DetailRow>(
        `SELECT ${DETAIL_COLUMNS} FROM ${TABLE} WHERE ${w} ORDER BY ${order} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, f.limit, offset],
      );
      const counts = await eventCounts(
        projectId,
        rows.rows.map((r) => r.id),
      );
      return pageEnvelope(
        rows.rows.map((r) => toDetail(r, counts.get(r.id) ?? 0)),
        total,
        f.page,
        f.limit,
      );
    },

    /** The values the list's filters offer: platforms and app versions seen in the project. */
    async facets(projectId: string) {
      const p = await db.query<{ platform: string }>(
        `SELECT DISTINCT platform FROM ${TABLE} WHERE project_id = $1 AND platform IS NOT NULL ORDER BY platform LIMIT 50`,
        [projectId],
      );
      const v = await db.query<{ app_version: string }>(
        `SELECT app_version FROM ${TABLE} WHERE project_id = $1 AND app_version IS NOT NULL
         GROUP BY app_version ORDER BY max(started_at) DESC LIMIT 100`,
        [projectId],
      );
      return { platforms: p.rows.map((r) => r.platform), appVersions: v.rows.map((r) => r.app_version) };
    },

    async get(projectId: string, sessionId: string) {
      const r = await db.query<DetailRow>(`SELECT ${DETAIL_COLUMNS} FROM ${TABLE} WHERE project_id = $1 AND id = $2`, [
        projectId,
        sessionId,
      ]);
      const row = r.rows[0];
      if (!row) return null;
      const counts = await eventCounts(projectId, [sessionId]);
      return toDetail(row, counts.get(sessionId) ?? 0);
    },

    /**
     * Sessions started per UTC day in [from, to), and how many of them did not crash (a fatal
     * crash makes a session 'crashed'; handled exceptions do not count against it).
     */
    async daily(projectId: string, from: number, to: number) {
      const r = await db.query<{ day: string; sessions: number; crash_free: number }>(
        `SELECT to_char(to_timestamp(started_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                count(*)::int AS sessions, count(*) FILTER (WHERE status <> 'crashed')::int AS crash_free
         FROM ${TABLE} WHERE project_id = $1 AND started_at >= $2 AND started_at < $3 GROUP BY 1 ORDER BY 1`,
        [projectId, from, to],
      );
      const byDay = new Map(r.rows.map((d) => [d.day, d]));
      return utcDaysOf(from, to).map((day) => {
        const d = byDay.get(day);
        return { day, sessions: d?.sessions ?? 0, crashFree: d?.crash_free ?? 0 };
      });
    },
  };
}

export type SessionsRepo = ReturnType<typeof sessionsRepo>;

/**
 * Sessions per app version started since `sinceMs`, and how many of them ended in a fatal crash
 * (status 'crashed'): a crash-free rule's pass. Served by sessions_export_idx (project, started_at).
 */
export async function crashFreeByVersion(
  q: Queryable,
  projectId: string,
  sinceMs: number,
): Promise<{ appVersion: string; sessions: number; crashed: number }[]> {
  const r = await q.query<{ app_version: string; sessions: number | string; crashed: number | string }>(
    `SELECT app_version, count(*) AS sessions, count(*) FILTER (WHERE status = 'crashed') AS crashed
     FROM ${TABLE} WHERE project_id = $1 AND started_at >= $2 AND app_version IS NOT NULL GROUP BY app_version`,
    [projectId, sinceMs],
  );
  return r.rows.map((x) => ({ appVersion: x.app_version, sessions: Number(x.sessions), crashed: Number(x.crashed) }));
}
