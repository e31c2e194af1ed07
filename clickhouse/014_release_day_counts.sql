-- Exact release counts of quiet days (docs/decisions.md, "Exact release counts of quiet days").
--
-- 010 counts sessions exactly by reading one row per session of the range (FINAL): at 10 M
-- sessions that read alone took 0.7 s of the Releases page. A day's counts stop changing once no
-- fact about its sessions arrives, so the page keeps each day's counts once the day has been
-- over and untouched for RELEASE_DAY_QUIET_MS, and uses them while no fact has touched the day
-- since (the rule: src/domain/releaseHealth.ts, planDays). Times are the store's clock in ms.

-- The latest session-fact insert per day of session start: a late start or crash fact makes the
-- day's kept counts stale.
CREATE TABLE IF NOT EXISTS release_day_touched
(
  project_id LowCardinality(String),
  day Date,
  touched_at SimpleAggregateFunction(max, UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, day)
SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS release_day_touched_mv TO release_day_touched AS
SELECT project_id, toDate(started_at, 'UTC') AS day, max(toUInt64(toUnixTimestamp64Milli(now64(3)))) AS touched_at
FROM session_facts
GROUP BY project_id, day;

-- A day's exact sessions and crashed sessions per release, as counted at counted_at; a later
-- count of the same day replaces it (it can only add releases: sessions are never removed).
CREATE TABLE IF NOT EXISTS release_day_counts
(
  project_id LowCardinality(String),
  day Date,
  app_version LowCardinality(String),
  platform LowCardinality(String),
  sessions UInt64,
  crashed_sessions UInt64,
  counted_at UInt64
)
ENGINE = ReplacingMergeTree(counted_at)
ORDER BY (project_id, day, app_version, platform)
SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

-- That a day was counted, and when: written after its counts, so a day whose mark is read has
-- its counts (a day without sessions has a mark and no counts).
CREATE TABLE IF NOT EXISTS release_day_counted
(
  project_id LowCardinality(String),
  day Date,
  counted_at UInt64
)
ENGINE = ReplacingMergeTree(counted_at)
ORDER BY (project_id, day)
SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, min_rows_to_fsync_after_merge = 1;

-- Existing installs: every day that already has facts is touched now, so none is kept before it
-- has been quiet (an insert still running while this ran is then covered).
INSERT INTO release_day_touched (project_id, day, touched_at)
SELECT project_id, toDate(started_at, 'UTC'), toUInt64(toUnixTimestamp64Milli(now64(3))) FROM session_facts GROUP BY 1, 2
