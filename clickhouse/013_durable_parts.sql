-- Parts on disk before the spool lets go of their rows. The spools fsync every acknowledged body
-- and delete a segment once its insert committed; the engine, by default, fsyncs no part: an
-- inserted part sits in the page cache for up to ~30 s (dirty_expire_centisecs) after the segment
-- that held its rows is gone, so a power loss or a host crash (not a process kill: the kernel still
-- writes the cache) could lose acknowledged rows. Merges had the same hole, wider: the embedded
-- engine keeps no inactive parts (old_parts_lifetime = 0, where a ClickHouse server keeps them
-- 480 s for this reason), so a merged part that had not reached the disk took rows inserted long
-- before with it.
-- Every table written by an insert or a view gets: its inserted parts fsynced, its part directory
-- fsynced after every part operation (the rename that commits a part), and every merged part
-- fsynced before it replaces its sources. Measured on the bench machine (docs/bench.md): no
-- difference to the ingest rate at this noise; the engine's insert threads wait on the disk, not
-- the request thread. The migration runner's own tables are not here: a lost step record reruns
-- an idempotent statement (src/stores/migrations.ts). test/stores/clickhouse-migration.test.ts
-- checks that every other MergeTree table carries these settings, so a new table cannot forget.
ALTER TABLE events MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE network_logs MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE crash_occurrences MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE session_facts MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE release_health_daily MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE release_adoption_hourly MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE release_health_env_daily MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE release_sessions MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE release_seen MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE session_dimensions_daily MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE crash_dimensions_daily MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE crash_dimensions_project_daily MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

ALTER TABLE crash_group_state MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1
