-- Crash suspects: per group, how its occurrences spread over release, platform, OS version, device
-- model and network type against the project's sessions of the same days, and over environment
-- and each tag (clickhouse/008_crash_context.sql) against the project's occurrences of those days (docs/decisions.md,
-- "Crash suspects and the trail"). Both sides are pre-aggregated per UTC day and (dimension,
-- value), so the crash page merges a few thousand small states whatever the number of sessions
-- and occurrences: a group of a million occurrences in a project of ten million sessions reads
-- only its own days' rows.
--
-- A value is written only when known; each dimension also gets a row with value '' holding
-- every session (occurrence) that had a known value of it: the denominator of its shares.
-- Sketches (uniqCombined(14), as release health), not counts: a retried session start or crash
-- report is the same session or occurrence again.

-- The session's device context, so the baseline needs no Postgres read.
ALTER TABLE session_facts ADD COLUMN IF NOT EXISTS os_version LowCardinality(String) DEFAULT '';

ALTER TABLE session_facts ADD COLUMN IF NOT EXISTS brand LowCardinality(String) DEFAULT '';

ALTER TABLE session_facts ADD COLUMN IF NOT EXISTS model String DEFAULT '';

ALTER TABLE session_facts ADD COLUMN IF NOT EXISTS network_type LowCardinality(String) DEFAULT '';

-- An occurrence copies its session's network type, as it copies its OS and device.
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS network_type LowCardinality(Nullable(String));

CREATE TABLE IF NOT EXISTS session_dimensions_daily
(
  project_id LowCardinality(String),
  day Date,
  dimension LowCardinality(String),
  value String,
  sessions AggregateFunction(uniqCombined(14), UUID)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, dimension, value);

-- The dimension values are spelled as the group side spells them (below): the same expressions.
CREATE MATERIALIZED VIEW IF NOT EXISTS session_dimensions_daily_mv TO session_dimensions_daily AS
SELECT project_id, toDate(started_at, 'UTC') AS day,
  d.1 AS dimension, d.2 AS value, uniqCombinedState(14)(session_id) AS sessions
FROM session_facts
ARRAY JOIN arrayConcat(arrayFilter(x -> x.2 != '', [
    ('release', concat('', app_version)), ('platform', concat('', platform)),
    ('osVersion', if(os_version = '', '', trim(concat(platform, ' ', os_version)))),
    ('deviceModel', trim(concat(brand, ' ', model))), ('networkType', concat('', network_type))]) AS dims,
  arrayMap(x -> (x.1, ''), dims)) AS d
WHERE crashed = 0
GROUP BY project_id, day, dimension, value;

CREATE TABLE IF NOT EXISTS crash_dimensions_daily
(
  project_id LowCardinality(String),
  group_key String,
  day Date,
  dimension LowCardinality(String),
  value String,
  occurrences AggregateFunction(uniqCombined(14), String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, group_key, day, dimension, value);

CREATE MATERIALIZED VIEW IF NOT EXISTS crash_dimensions_daily_mv TO crash_dimensions_daily AS
SELECT project_id, group_key, toDate(occurred_at, 'UTC') AS day,
  d.1 AS dimension, d.2 AS value, uniqCombinedState(14)(id) AS occurrences
FROM crash_occurrences
ARRAY JOIN arrayConcat([('', '')], arrayFilter(x -> x.2 != '', arrayConcat([
    ('release', ifNull(app_version, '')), ('platform', ifNull(platform, '')),
    ('osVersion', if(ifNull(os_version, '') = '', '', trim(concat(ifNull(platform, ''), ' ', os_version)))),
    ('deviceModel', trim(concat(ifNull(brand, ''), ' ', ifNull(model, '')))), ('networkType', ifNull(network_type, '')),
    ('environment', concat('', environment))],
    arrayMap((k, v) -> (concat('tag:', k), v), mapKeys(tags), mapValues(tags)))) AS dims,
  arrayMap(x -> (x.1, ''), dims)) AS d
GROUP BY project_id, group_key, day, dimension, value;

-- The baseline of the crash report's own dimensions (environment, tags): the project's occurrences
-- of every group on the same days (tags exist only there; a session's environment is optional).
CREATE TABLE IF NOT EXISTS crash_dimensions_project_daily
(
  project_id LowCardinality(String),
  day Date,
  dimension LowCardinality(String),
  value String,
  occurrences AggregateFunction(uniqCombined(14), String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, dimension, value);

CREATE MATERIALIZED VIEW IF NOT EXISTS crash_dimensions_project_daily_mv TO crash_dimensions_project_daily AS
SELECT project_id, toDate(occurred_at, 'UTC') AS day,
  d.1 AS dimension, d.2 AS value, uniqCombinedState(14)(id) AS occurrences
FROM crash_occurrences
ARRAY JOIN arrayConcat(arrayFilter(x -> x.2 != '', arrayConcat([('environment', concat('', environment))],
    arrayMap((k, v) -> (concat('tag:', k), v), mapKeys(tags), mapValues(tags)))) AS dims,
  arrayMap(x -> (x.1, ''), dims)) AS d
GROUP BY project_id, day, dimension, value;

-- What was stored before this migration (its sessions have no device context yet: they count
-- in the release and platform baselines only).
INSERT INTO session_dimensions_daily
SELECT project_id, toDate(started_at, 'UTC') AS day,
  d.1 AS dimension, d.2 AS value, uniqCombinedState(14)(session_id) AS sessions
FROM session_facts
ARRAY JOIN arrayConcat(arrayFilter(x -> x.2 != '', [
    ('release', concat('', app_version)), ('platform', concat('', platform))]) AS dims,
  arrayMap(x -> (x.1, ''), dims)) AS d
WHERE crashed = 0
GROUP BY project_id, day, dimension, value;

INSERT INTO crash_dimensions_daily
SELECT project_id, group_key, toDate(occurred_at, 'UTC') AS day,
  d.1 AS dimension, d.2 AS value, uniqCombinedState(14)(id) AS occurrences
FROM crash_occurrences
ARRAY JOIN arrayConcat([('', '')], arrayFilter(x -> x.2 != '', arrayConcat([
    ('release', ifNull(app_version, '')), ('platform', ifNull(platform, '')),
    ('osVersion', if(ifNull(os_version, '') = '', '', trim(concat(ifNull(platform, ''), ' ', os_version)))),
    ('deviceModel', trim(concat(ifNull(brand, ''), ' ', ifNull(model, '')))), ('networkType', ifNull(network_type, '')),
    ('environment', concat('', environment))],
    arrayMap((k, v) -> (concat('tag:', k), v), mapKeys(tags), mapValues(tags)))) AS dims,
  arrayMap(x -> (x.1, ''), dims)) AS d
GROUP BY project_id, group_key, day, dimension, value;

INSERT INTO crash_dimensions_project_daily
SELECT project_id, toDate(occurred_at, 'UTC') AS day,
  d.1 AS dimension, d.2 AS value, uniqCombinedState(14)(id) AS occurrences
FROM crash_occurrences
ARRAY JOIN arrayConcat(arrayFilter(x -> x.2 != '', arrayConcat([('environment', concat('', environment))],
    arrayMap((k, v) -> (concat('tag:', k), v), mapKeys(tags), mapValues(tags)))) AS dims,
  arrayMap(x -> (x.1, ''), dims)) AS d
GROUP BY project_id, day, dimension, value
