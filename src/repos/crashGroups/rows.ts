import type { CrashGroupStatus } from '../../domain/crashGroupStatus.ts';
import { PG_NOW_MS } from '../exportCore/postgres.ts';
import type { ParquetColumn } from '../exportCore/parquet.ts';

/**
 * Postgres `crash_groups`: each group's identity (created by its first occurrence), its
 * workflow and the first-occurrence decision. The occurrences and the counters aggregated from
 * them live in ClickHouse (repos/crashOccurrences.ts); recording combines both in
 * pipeline/recordCrashes/, the workflow by hand and the read model in services/crashGroups.ts. No row here is written once per occurrence: a storm of one crash
 * must not queue on the group's row lock (docs/decisions.md, Crashes).
 */
export const GROUPS = 'crash_groups';
/** The keys that lead to a group (migration 013): its own, and those that joined it. */
export const KEYS = 'crash_group_keys';

/** What Postgres holds of a group: identity, workflow, and the context of its first occurrence. */
export interface GroupRow {
  id: string;
  group_key: string;
  message: string;
  status: CrashGroupStatus;
  is_fatal: boolean;
  handled: boolean;
  platform: string | null;
  app_version: string | null;
  os_version: string | null;
  first_seen_at: number;
  updated_at: number;
  stack_head: string;
  summary: string | null;
  summary_source: string | null;
  summary_at: Date | string | null;
  resolved_versions: string[];
  /** The own keys of the groups merged into this one: their occurrences are stored under them. */
  merged_keys: string[];
  /** The group this one was merged into (null: not merged). */
  merged_into: string | null;
}

/** Every key a group's occurrences are stored under in ClickHouse: its own and its merged groups'. */
export const storageKeys = (r: Pick<GroupRow, 'group_key' | 'merged_keys'>): string[] => [
  r.group_key,
  ...r.merged_keys,
];

export const COLUMNS =
  'id, group_key, message, status, is_fatal, handled, platform, app_version, os_version, first_seen_at, updated_at, stack_head, summary, summary_source, summary_at, resolved_versions, merged_into, ' +
  `ARRAY(SELECT m.group_key FROM crash_groups m WHERE m.merged_into = crash_groups.id ORDER BY m.group_key) AS merged_keys`;

/** The id a group id answers for: the group it was merged into, or itself (`$1` the project, `n` the id's parameter). */
export const resolvedId = (n: number) =>
  `COALESCE((SELECT merged_into FROM crash_groups WHERE project_id = $1 AND id = $${n}), $${n})`;

/** The part of a group the crash workflow decides on. */
export interface GroupState {
  id: string;
  group_key: string;
  status: CrashGroupStatus;
  first_seen_at: number;
  resolved_versions: string[];
}

/**
 * A group's updatedAt is the latest of its creation, its status or summary change, and the
 * time (server clock) its latest occurrence was recorded: new occurrences change the counters.
 * Not lastSeenAt itself: that is the device's clock, and a late report of an old crash changes
 * occurrenceCount without moving it (docs/decisions.md, "Incremental exports"). Occurrences
 * write no Postgres row each: they mark their group, and the marks are stamped together at
 * most once per EXPORT_TOUCH_INTERVAL_MS (services/index.ts), after the occurrence committed.
 */
export const STAMP = `updated_at = ${PG_NOW_MS}`;

/** The export's columns of a crash group, in the contract's order (the read model adds the rest). */
export const CRASH_PARQUET: ParquetColumn[] = [
  { name: 'id', type: 'string', nullable: false },
  { name: 'message', type: 'string', nullable: false },
  { name: 'status', type: 'string', nullable: false },
  { name: 'isFatal', type: 'boolean', nullable: false },
  { name: 'handled', type: 'boolean', nullable: false },
  { name: 'occurrenceCount', type: 'int64', nullable: false },
  { name: 'affectedDevices', type: 'int64', nullable: false },
  { name: 'platform', type: 'string', nullable: true },
  { name: 'appVersion', type: 'string', nullable: true },
  { name: 'osVersion', type: 'string', nullable: true },
  { name: 'firstSeenAt', type: 'timestamp', nullable: false },
  { name: 'lastSeenAt', type: 'timestamp', nullable: false },
  { name: 'updatedAt', type: 'timestamp', nullable: false },
  { name: 'mergedInto', type: 'string', nullable: true },
];

export const CRASH_FIELDS = CRASH_PARQUET.map((c) => c.name);
