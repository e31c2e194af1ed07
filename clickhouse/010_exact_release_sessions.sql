-- Exact sessions and crashed sessions per release (docs/decisions.md, "Exact release counts").
--
-- 007's daily sketches estimate distinct sessions (uniqCombined: about 0.8 % off beyond a few
-- thousand), and crash-free rates are made of sessions and crashed sessions: those two are now
-- counted exactly. release_sessions holds one row per session, keyed by the UTC day of its start,
-- its release and its id: a retried start or crash fact, or a second backfill, is the same key and
-- collapses (FINAL at read time until merges have done it); the version column keeps the crashed
-- row. Reads count rows of a day range of one project, in key order, which FINAL merges per
-- partition without a hash set of session ids. Users stay a sketch (007), shown with its bound.
CREATE TABLE IF NOT EXISTS release_sessions
(
  project_id LowCardinality(String),
  day Date,
  app_version LowCardinality(String),
  platform LowCardinality(String),
  session_id UUID,
  crashed UInt8
)
ENGINE = ReplacingMergeTree(crashed)
PARTITION BY toYYYYMM(least(greatest(day, toDate('2020-01-01')), toDate('2099-12-31')))
ORDER BY (project_id, day, app_version, platform, session_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS release_sessions_mv TO release_sessions AS
SELECT project_id, toDate(started_at, 'UTC') AS day, app_version, platform, session_id, crashed
FROM session_facts;

-- A release's first and latest session start, to the millisecond: "last seen" is a real instant,
-- never the end of an hour bucket.
CREATE TABLE IF NOT EXISTS release_seen
(
  project_id LowCardinality(String),
  app_version LowCardinality(String),
  platform LowCardinality(String),
  first_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, app_version, platform);

CREATE MATERIALIZED VIEW IF NOT EXISTS release_seen_mv TO release_seen AS
SELECT project_id, app_version, platform, min(started_at) AS first_at, max(started_at) AS last_at
FROM session_facts
GROUP BY project_id, app_version, platform;

-- Existing installs: both filled from the facts already held. A fact written between the views'
-- creation and this copy is in both, which the keys above collapse (min/max and FINAL).
INSERT INTO release_sessions (project_id, day, app_version, platform, session_id, crashed)
SELECT project_id, toDate(started_at, 'UTC'), app_version, platform, session_id, crashed FROM session_facts;

INSERT INTO release_seen (project_id, app_version, platform, first_at, last_at)
SELECT project_id, app_version, platform, min(started_at), max(started_at) FROM session_facts GROUP BY project_id, app_version, platform
