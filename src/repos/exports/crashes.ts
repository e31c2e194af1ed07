import type { Queryable } from '../../stores/postgres/port.ts';
import { isoMs } from '../../domain/exportParams.ts';
import { pgResource } from './postgres.ts';
import type { ExportResource } from './types.ts';

export const CRASH_FIELDS = [
  'id', 'message', 'status', 'isFatal', 'handled', 'occurrenceCount', 'affectedDevices',
  'platform', 'appVersion', 'osVersion', 'firstSeenAt', 'lastSeenAt',
] as const;

interface CrashSqlRow extends Record<string, unknown> {
  id: string;
  message: string;
  status: string;
  is_fatal: boolean;
  handled: boolean;
  occurrence_count: number;
  affected_devices: number;
  platform: string | null;
  app_version: string | null;
  os_version: string | null;
  first_seen_at: number;
  last_seen_at: number;
}

/** Crash groups of a project by (firstSeenAt, id). */
export function crashesExport(db: Queryable): ExportResource<Record<string, never>> {
  return pgResource<Record<string, never>, CrashSqlRow>(db, {
    name: 'crashes',
    fields: CRASH_FIELDS,
    table: 'crash_groups',
    columns: 'id, message, status, is_fatal, handled, occurrence_count, affected_devices, platform, app_version, os_version, first_seen_at, last_seen_at',
    key: ['first_seen_at', 'id'],
    where: () => '',
    async shape(_projectId, rows) {
      return rows.map((r) => ({
        id: r.id,
        message: r.message,
        status: r.status,
        isFatal: r.is_fatal,
        handled: r.handled,
        occurrenceCount: r.occurrence_count,
        affectedDevices: r.affected_devices,
        platform: r.platform,
        appVersion: r.app_version,
        osVersion: r.os_version,
        firstSeenAt: isoMs(r.first_seen_at),
        lastSeenAt: isoMs(r.last_seen_at),
      }));
    },
  });
}
