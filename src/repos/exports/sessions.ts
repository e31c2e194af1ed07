import type { Queryable } from '../../stores/postgres/port.ts';
import type { ClickHouse } from '../../stores/clickhouse/port.ts';
import { isoMs } from '../../domain/exportParams.ts';
import { eventCounts } from './events.ts';
import { pgResource } from './postgres.ts';
import type { DateFilter, ExportResource } from './types.ts';

export const SESSION_FIELDS = [
  'id', 'userId', 'status', 'platform', 'osVersion', 'appVersion', 'networkType', 'eventCount',
  'hasCrash', 'hasNetworkErrors', 'duration', 'startedAt', 'endedAt',
] as const;

interface SessionSqlRow extends Record<string, unknown> {
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

/** Sessions by (startedAt, id), filtered on startedAt; eventCount comes from the event store. */
export function sessionsExport(db: Queryable, ch: ClickHouse): ExportResource<DateFilter> {
  return pgResource<DateFilter, SessionSqlRow>(db, {
    name: 'sessions',
    fields: SESSION_FIELDS,
    table: 'sessions',
    columns: 'id, user_id, status, platform, os_version, app_version, network_type, has_crash, has_network_errors, started_at, ended_at',
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
      const counts = await eventCounts(ch, projectId, rows.map((r) => r.id));
      return rows.map((r) => ({
        id: r.id,
        userId: r.user_id,
        status: r.status,
        platform: r.platform,
        osVersion: r.os_version,
        appVersion: r.app_version,
        networkType: r.network_type,
        eventCount: counts.get(r.id) ?? 0,
        hasCrash: r.has_crash,
        hasNetworkErrors: r.has_network_errors,
        duration: r.ended_at === null ? null : r.ended_at - r.started_at,
        startedAt: isoMs(r.started_at),
        endedAt: isoMs(r.ended_at),
      }));
    },
  });
}
