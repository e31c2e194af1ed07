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

-- One row per (project, UTC day of the session's start, app version, platform) once merged, with
-- sketches of the sessions, users, crashed sessions and crashed users: the page merges a state per
-- release and day, whatever the number of sessions. uniqCombined(14): exact for small sets (an
-- array, then a hash set), a HyperLogLog of 2^14 cells beyond (about 0.8% standard error), so
-- merging a day costs a fixed 16 Ki cells instead of one step per session as uniq's sampled hash
-- sets did (measured: 27 times slower at 1 M sessions and growing with them; docs/decisions.md,
-- "Release health"). Sketches, not counts: a duplicated fact (a retry, a second backfill) is the
-- same session or user again, and a user's sessions on many days merge into one user.
CREATE TABLE IF NOT EXISTS release_health_daily
(
  project_id LowCardinality(String),
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
ORDER BY (project_id, day, app_version, platform);

CREATE MATERIALIZED VIEW IF NOT EXISTS release_health_daily_mv TO release_health_daily AS
SELECT project_id, toDate(started_at, 'UTC') AS day, app_version, platform,
  uniqCombinedState(14)(session_id) AS sessions, uniqCombinedState(14)(user_key) AS users,
  uniqCombinedStateIf(14)(session_id, crashed = 1) AS crashed_sessions, uniqCombinedStateIf(14)(user_key, crashed = 1) AS crashed_users
FROM session_facts
GROUP BY project_id, day, app_version, platform;

-- Sessions per UTC hour, for adoption over the last 24 h and 7 days (read over 7 days at most) and
-- the hour a release was first and last seen.
CREATE TABLE IF NOT EXISTS release_adoption_hourly
(
  project_id LowCardinality(String),
  hour DateTime('UTC'),
  app_version LowCardinality(String),
  platform LowCardinality(String),
  sessions AggregateFunction(uniqCombined(14), UUID)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, app_version, platform);

CREATE MATERIALIZED VIEW IF NOT EXISTS release_adoption_hourly_mv TO release_adoption_hourly AS
SELECT project_id, toStartOfHour(toDateTime(started_at, 'UTC')) AS hour, app_version, platform, uniqCombinedState(14)(session_id) AS sessions
FROM session_facts
GROUP BY project_id, hour, app_version, platform
