import type { Queryable } from '../../stores/postgres/port.ts';
import { CRASH_GROUP_CORE_COLUMNS, crashGroupFields, type CrashGroupCoreRow } from '../shapes.ts';
import { pgResource } from './postgres.ts';
import type { ExportResource } from './types.ts';

export const CRASH_FIELDS = [
  'id', 'message', 'status', 'isFatal', 'handled', 'occurrenceCount', 'affectedDevices',
  'platform', 'appVersion', 'osVersion', 'firstSeenAt', 'lastSeenAt',
] as const;

/** Crash groups of a project by (firstSeenAt, id). */
export function crashesExport(db: Queryable): ExportResource<Record<string, never>> {
  return pgResource<Record<string, never>, CrashGroupCoreRow & Record<string, unknown>>(db, {
    name: 'crashes',
    fields: CRASH_FIELDS,
    table: 'crash_groups',
    columns: CRASH_GROUP_CORE_COLUMNS,
    key: ['first_seen_at', 'id'],
    where: () => '',
    async shape(_projectId, rows) {
      return rows.map(crashGroupFields);
    },
  });
}
