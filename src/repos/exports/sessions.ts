import type { Queryable } from '../../stores/postgres/port.ts';
import type { ClickHouse } from '../../stores/clickhouse/port.ts';
import { SESSION_CORE_COLUMNS, sessionFields, type SessionCoreRow } from '../shapes.ts';
import { eventCounts } from './events.ts';
import { pgResource } from './postgres.ts';
import type { DateFilter, ExportResource } from './types.ts';

export const SESSION_FIELDS = [
  'id', 'userId', 'status', 'platform', 'osVersion', 'appVersion', 'networkType', 'eventCount',
  'hasCrash', 'hasNetworkErrors', 'duration', 'startedAt', 'endedAt',
] as const;

/** Sessions by (startedAt, id), filtered on startedAt; eventCount comes from the event store. */
export function sessionsExport(db: Queryable, ch: ClickHouse): ExportResource<DateFilter> {
  return pgResource<DateFilter, SessionCoreRow & Record<string, unknown>>(db, {
    name: 'sessions',
    fields: SESSION_FIELDS,
    table: 'sessions',
    columns: SESSION_CORE_COLUMNS,
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
      return rows.map((r) => sessionFields(r, counts.get(r.id) ?? 0));
    },
  });
}
