-- Release health: per app version and platform, sessions, users, crashed sessions and crashed
-- users, computed where it scales (docs/decisions.md, "Release health").
--
-- session_facts holds one row when a session starts (crashed = 0) and one when it first crashes
-- fatally (crashed = 1), with the context of its start: the release health page never reads the
-- Postgres sessions table. Its identity is (project_id, session_id, crashed): a retried start or
-- crash report, or the start-up backfill run twice, is the same row, collapsed by merges.
-- user_key is the session's user id, else its device fingerprint (prefixed `device:`), so an app
-- without signed-in users still gets crash-free users (as installations, like Crashlytics).
CREATE TABLE IF NOT EXISTS session_facts
(
  project_id LowCardinality(String),
  session_id UUID,
  started_at DateTime64(3, 'UTC') CODEC(DoubleDelta, LZ4),
  app_version LowCardinality(String),
  platform LowCardinality(String),
  user_key String,
  crashed UInt8
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(least(greatest(started_at, toDateTime64('2020-01-01 00:00:00', 3, 'UTC')), toDateTime64('2099-12-31 00:00:00', 3, 'UTC')))
ORDER BY (project_id, session_id, crashed);

-- One row per (project, UTC hour of the session's start, app version, platform) once merged: the
-- page reads a few thousand small states, whatever the number of sessions. uniq states, not
-- counts: a duplicated fact (a retry, a second backfill) is the same session or user again, and a
-- user's sessions over many hours merge into one user. uniq is exact up to 65,536 distinct values
-- per state and within about 1% beyond (docs/decisions.md says why this is enough for crash-free
-- rates). Hours, not days, so "adoption over the last 24 h" is a real 24 h.
CREATE TABLE IF NOT EXISTS release_health_hourly
(
  project_id LowCardinality(String),
  hour DateTime('UTC'),
  app_version LowCardinality(String),
  platform LowCardinality(String),
  sessions AggregateFunction(uniq, UUID),
  users AggregateFunction(uniq, String),
  crashed_sessions AggregateFunction(uniq, UUID),
  crashed_users AggregateFunction(uniq, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, app_version, platform);

CREATE MATERIALIZED VIEW IF NOT EXISTS release_health_hourly_mv TO release_health_hourly AS
SELECT project_id, toStartOfHour(toDateTime(started_at, 'UTC')) AS hour, app_version, platform,
  uniqState(session_id) AS sessions, uniqState(user_key) AS users,
  uniqStateIf(session_id, crashed = 1) AS crashed_sessions, uniqStateIf(user_key, crashed = 1) AS crashed_users
FROM session_facts
GROUP BY project_id, hour, app_version, platform
