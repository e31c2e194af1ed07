import { isoMs } from '../domain/exportParams.ts';

// The contract's session and crash-group fields, built in one place: the export API, the
// management API and the dashboard each add their own extras around these.

export interface SessionCoreRow {
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

export const SESSION_CORE_COLUMNS =
  'id, user_id, status, platform, os_version, app_version, network_type, has_crash, has_network_errors, started_at, ended_at';

export function sessionFields(r: SessionCoreRow, eventCount: number) {
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
    startedAt: isoMs(r.started_at)!,
    endedAt: isoMs(r.ended_at),
  };
}

export interface CrashGroupCoreRow {
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

export const CRASH_GROUP_CORE_COLUMNS =
  'id, message, status, is_fatal, handled, occurrence_count, affected_devices, platform, app_version, os_version, first_seen_at, last_seen_at';

export function crashGroupFields(r: CrashGroupCoreRow) {
  return {
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
    firstSeenAt: isoMs(r.first_seen_at)!,
    lastSeenAt: isoMs(r.last_seen_at)!,
  };
}
