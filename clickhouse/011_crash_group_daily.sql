-- The crash page at scale (docs/decisions.md, "The crash page's state"): a group's facts and its
-- breakdown were aggregated from its occurrences at read, so a group of a million occurrences
-- read a million rows (and hashed a million 64-character ids) several times per page. Its
-- state now lives per UTC day, environment and level, written by a view as occurrences are
-- inserted: the page merges a few hundred small rows, whatever the number of occurrences.
--
-- One row per (group key, dimension, value, day, environment, level); dimension '' is the whole
-- slice, the others (platform, deviceModel, osVersion, release) hold its occurrences by value
-- ('' when the occurrence had none). An occurrence's id is a hash of its report, timestamp
-- included, so a retried report always falls in the same slice as its first copy:
-- - `occurrences` (the slice's distinct ids, hashed to 64 bits, exact) counts it once; slices
--   are disjoint, so a group's count is the sum of its slices' counts;
-- - `rows` counts physical rows (a retry again): where a slice's `rows` equals its
--   `occurrences`, the sums of its dimension rows are exact; a slice with a retry in it (rare) is
--   counted from the occurrences themselves (src/repos/crashOccurrences.ts);
-- - `devices` and `users` are exact distinct sets on the whole-slice rows (merged across
--   slices); `value_devices` is the breakdown's devices per value, a sketch (uniqCombined(14),
--   exact for a few thousand devices, about 0.8 % beyond, as release health's users).
CREATE TABLE IF NOT EXISTS crash_group_daily
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
ORDER BY (project_id, group_key, dimension, value, day, environment, level);

-- The breakdown's values are spelled as the page always spelled them: "brand model", "platform os".
CREATE MATERIALIZED VIEW IF NOT EXISTS crash_group_daily_mv TO crash_group_daily AS
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

-- What was stored before this migration. A row inserted between the view's creation and this
-- copy is counted twice in `rows` (not in `occurrences`): its slice reads as one with a retry.
INSERT INTO crash_group_daily
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

-- When an occurrence arrived, for /export/crash-occurrences' cursor (docs/export.md): the
-- server's clock at the insert, so an ETL job resumes in arrival order, late reports of old
-- crashes included. Rows stored before this migration arrived "at 1970-01-01" (the first pull
-- returns them first, by id): the column is added with that default and written into the
-- existing parts, and only then does its default become the insert's time (an unwritten default
-- would be computed at every read).
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS ingested_at DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC') CODEC(DoubleDelta, LZ4);

ALTER TABLE crash_occurrences MATERIALIZE COLUMN ingested_at SETTINGS mutations_sync = 2;

ALTER TABLE crash_occurrences MODIFY COLUMN ingested_at DateTime64(3, 'UTC') DEFAULT now64(3, 'UTC') CODEC(DoubleDelta, LZ4);

-- A cursor's read skips the granules that arrived before it (parts are written in arrival order).
ALTER TABLE crash_occurrences ADD INDEX IF NOT EXISTS ingested_idx ingested_at TYPE minmax GRANULARITY 1
