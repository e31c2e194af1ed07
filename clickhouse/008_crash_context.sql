-- Crash context (docs/decisions.md, "Crash context"): the optional fields of a crash report, kept
-- with its occurrence. The report's own userId, when it sent one, is stored in user_id (it
-- overrides the session's). Rows written before this migration read their level from is_fatal,
-- as the default rule gives it; the others read as empty.
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS environment LowCardinality(String) DEFAULT '';
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS level LowCardinality(String) DEFAULT if(is_fatal, 'fatal', 'error');
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS tags Map(String, String);
-- JSON text, bounded at ingest (8 KiB, 32 KiB); '' when none was sent
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS context String DEFAULT '' CODEC(ZSTD(3));
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS breadcrumbs String DEFAULT '' CODEC(ZSTD(3));
-- what the report sent that was not kept, as JSON [{field, reason}] ('' when nothing)
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS dropped String DEFAULT '';

-- Release health by environment: a session's environment travels with its facts, and a second
-- daily state keyed by it answers the Releases page and export when an environment is asked
-- for (the unfiltered page keeps reading release_health_daily). Facts written before this
-- migration have environment '' (and are not in the new state: it fills from now on).
ALTER TABLE session_facts ADD COLUMN IF NOT EXISTS environment LowCardinality(String) DEFAULT '';

CREATE TABLE IF NOT EXISTS release_health_env_daily
(
  project_id LowCardinality(String),
  environment LowCardinality(String),
  day Date,
  app_version LowCardinality(String),
  platform LowCardinality(String),
  sessions AggregateFunction(uniqCombined(14), UUID),
  users AggregateFunction(uniqCombined(14), String),
  crashed_sessions AggregateFunction(uniqCombined(14), UUID),
  crashed_users AggregateFunction(uniqCombined(14), String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, environment, day, app_version, platform);

CREATE MATERIALIZED VIEW IF NOT EXISTS release_health_env_daily_mv TO release_health_env_daily AS
SELECT project_id, environment, toDate(started_at, 'UTC') AS day, app_version, platform,
  uniqCombinedState(14)(session_id) AS sessions, uniqCombinedState(14)(user_key) AS users,
  uniqCombinedStateIf(14)(session_id, crashed = 1) AS crashed_sessions, uniqCombinedStateIf(14)(user_key, crashed = 1) AS crashed_users
FROM session_facts
GROUP BY project_id, environment, day, app_version, platform
