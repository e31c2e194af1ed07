-- Incremental exports (updatedSince / cursor): when a row's exported fields last changed, in
-- Unix ms of the Postgres clock (one clock for every API process). Set by every write of an
-- exported field (src/repos/sessions.ts, src/repos/crashGroups.ts), and by a session's new
-- events (eventCount, services/sessionTouches.ts). Rows that exist before this migration
-- get the migration's time: nothing older is known, and a sync started from any earlier
-- instant then sees every row once.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS updated_at bigint;
UPDATE sessions SET updated_at = floor(extract(epoch from clock_timestamp()) * 1000)::bigint WHERE updated_at IS NULL;
ALTER TABLE sessions ALTER COLUMN updated_at SET DEFAULT floor(extract(epoch from clock_timestamp()) * 1000)::bigint;
ALTER TABLE sessions ALTER COLUMN updated_at SET NOT NULL;
CREATE INDEX IF NOT EXISTS sessions_changes_idx ON sessions (project_id, updated_at, id);

-- A crash group's: the latest of its creation, status or summary change, and the time its
-- latest occurrence was recorded (set in the occurrence's existing group update, so no write
-- is added per occurrence).
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS updated_at bigint;
UPDATE crash_groups SET updated_at = floor(extract(epoch from clock_timestamp()) * 1000)::bigint WHERE updated_at IS NULL;
ALTER TABLE crash_groups ALTER COLUMN updated_at SET DEFAULT floor(extract(epoch from clock_timestamp()) * 1000)::bigint;
ALTER TABLE crash_groups ALTER COLUMN updated_at SET NOT NULL;
CREATE INDEX IF NOT EXISTS crash_groups_changes_idx ON crash_groups (project_id, updated_at, id);
