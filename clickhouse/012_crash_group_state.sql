-- The crash page's state (011) at a finer index: one mark per 256 rows instead of 8,192. The
-- crash list reads the state of the 50 groups on its page, scattered over the whole table: at the
-- default granularity each group's few rows cost a granule of 8,192, so a page read ~400k rows of
-- aggregate states at 100k groups (130 ms of the list's 135). The index granularity of a table
-- cannot be altered, so the state moves to a new table with the same columns and view:
-- 1. the new table and its view (from here on every insert feeds both),
-- 2. the old view goes (from here on only the new one is fed),
-- 3. the old table's rows are copied (an insert between 1 and 2 is in both: its slice's `rows`
--    then exceeds its `occurrences`, and is recounted from the occurrences as a retry is, so
--    every count stays exact, and the id, device and user sets are unions),
-- 4. the old table goes.
-- Each statement is a step of its own (src/stores/migrations.ts), so a restart resumes after the
-- last one that ran.
CREATE TABLE IF NOT EXISTS crash_group_state
(
  project_id LowCardinality(String),
  group_key String,
  dimension LowCardinality(String),
  value String,
  day Date,
  environment LowCardinality(String),
  level LowCardinality(String),
  rows SimpleAggregateFunction(sum, UInt64),
  occurrences AggregateFunction(uniqExact, UInt64),
  devices AggregateFunction(uniqExact, UInt64),
  users AggregateFunction(uniqExact, UInt64),
  value_devices AggregateFunction(uniqCombined(14), String),
  first_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_at SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
  -- (platform, app_version, os_version, id) of the slice's latest occurrence, by (occurred_at, id)
  latest AggregateFunction(argMax, Tuple(Nullable(String), Nullable(String), Nullable(String), String), Tuple(DateTime64(3, 'UTC'), String)),
  fatal SimpleAggregateFunction(max, UInt8),
  handled SimpleAggregateFunction(min, UInt8)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(least(greatest(day, toDate('2020-01-01')), toDate('2099-12-31')))
ORDER BY (project_id, group_key, dimension, value, day, environment, level)
SETTINGS index_granularity = 256;

CREATE MATERIALIZED VIEW IF NOT EXISTS crash_group_state_mv TO crash_group_state AS
SELECT project_id, group_key, d.1 AS dimension, d.2 AS value, toDate(occurred_at, 'UTC') AS day, environment, level,
  count() AS rows,
  uniqExactStateIf(cityHash64(id), d.1 = '') AS occurrences,
  uniqExactStateIf(cityHash64(device_fingerprint), d.1 = '') AS devices,
  uniqExactStateIf(cityHash64(assumeNotNull(user_id)), d.1 = '' AND isNotNull(user_id)) AS users,
  uniqCombinedStateIf(14)(device_fingerprint, d.1 != '') AS value_devices,
  min(occurred_at) AS first_at, max(occurred_at) AS last_at,
  argMaxStateIf(tuple(CAST(platform, 'Nullable(String)'), CAST(app_version, 'Nullable(String)'),
    CAST(os_version, 'Nullable(String)'), id), tuple(occurred_at, id), d.1 = '') AS latest,
  max(toUInt8(is_fatal)) AS fatal, min(toUInt8(handled)) AS handled
FROM crash_occurrences
ARRAY JOIN [('', ''), ('platform', ifNull(platform, '')),
    ('deviceModel', trim(concat(ifNull(brand, ''), ' ', ifNull(model, '')))),
    ('osVersion', if(isNull(platform) AND isNull(os_version), '', trim(concat(ifNull(platform, ''), ' ', ifNull(os_version, ''))))),
    ('release', ifNull(app_version, ''))] AS d
GROUP BY project_id, group_key, dimension, value, day, environment, level;

DROP VIEW IF EXISTS crash_group_daily_mv;

INSERT INTO crash_group_state SELECT * FROM crash_group_daily;

DROP TABLE IF EXISTS crash_group_daily;
