-- Crash occurrences and device fingerprints move to ClickHouse (clickhouse/003_crash_occurrences.sql).
-- Postgres keeps a group's identity, its workflow and the first-occurrence decision; nothing here
-- is written once per occurrence any more.

-- The session of the first occurrence, for the alert (the worker reads only Postgres).
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS first_session_id uuid;

UPDATE crash_groups g SET first_session_id = (
  SELECT o.session_id FROM crash_occurrences o
  WHERE o.project_id = g.project_id AND o.group_key = g.group_key
  ORDER BY o.occurred_at, o.created_at LIMIT 1
) WHERE g.first_session_id IS NULL;

-- Kept under a new name until their rows are copied into ClickHouse: start-up copies them and
-- drops both tables in one step, under the migration lock (src/repos/crashGroups.ts,
-- moveLegacyOccurrences), so a start stopped half-way copies them again and loses nothing.
ALTER TABLE IF EXISTS crash_occurrences RENAME TO crash_occurrences_legacy;

ALTER TABLE IF EXISTS crash_group_devices RENAME TO crash_group_devices_legacy;

-- Per-occurrence counters, now aggregated from ClickHouse at read. platform, app_version and
-- os_version stay: the context of the first occurrence, which the alert falls back on.
ALTER TABLE crash_groups DROP COLUMN IF EXISTS occurrence_count;

ALTER TABLE crash_groups DROP COLUMN IF EXISTS affected_devices;

ALTER TABLE crash_groups DROP COLUMN IF EXISTS last_seen_at;

ALTER TABLE crash_groups DROP COLUMN IF EXISTS app_versions
