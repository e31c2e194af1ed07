-- Tables for billions of rows, and an ingest path that does its parsing in the engine.
--
-- The API hands each accepted request body to ClickHouse as it arrived, one JSON line
-- {"project_id":…,"body":<the request body>} per request, into a Null table; materialized
-- views turn it into rows. So the API process does no per-event serialisation (the body was
-- parsed once, for validation), and ClickHouse, which parses JSON in C++, does the mapping.
-- Events keep typed columns; the export's `data` object and the event `id` are ALIAS
-- columns, computed when read, so they cost nothing at insert and nothing on disk.
--
-- Partitions are months of the row's own timestamp: a retried row has the same timestamp, so
-- it lands in the partition of its first copy and ReplacingMergeTree still collapses it.
-- Timestamps outside 2020…2099 share the edge partitions, so a broken device clock cannot
-- create thousands of partitions. Retention (RETENTION_DAYS) is applied as a TTL at start-up.
--
-- Existing data (001's tables) is copied over; every statement is idempotent or tracked by
-- the runner step by step, so a migration interrupted half-way resumes where it stopped.

RENAME TABLE events TO events_v1, network_logs TO network_logs_v1;

CREATE TABLE IF NOT EXISTS events
(
  project_id LowCardinality(String),
  session_id UUID,
  sequence_number UInt64,
  type LowCardinality(String),
  timestamp DateTime64(3, 'UTC') CODEC(DoubleDelta, LZ4),
  -- type-specific fields, as sent; '' / NULL where a type has none
  nav_from Nullable(String),
  nav_to String,
  method LowCardinality(String),
  url String,
  status_code Nullable(Int32),
  duration Nullable(Int64),
  error Nullable(String),
  name String,
  properties String,
  x Nullable(Float64),
  y Nullable(Float64),
  target Nullable(String),
  -- RFC 4122 v5 of "<sessionId>:<sequenceNumber>" in flightrec's namespace (src/domain/ids.ts)
  id String ALIAS lower(concat(
    substring(hex(SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(session_id), ':', toString(sequence_number)))), 1, 8), '-',
    substring(hex(SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(session_id), ':', toString(sequence_number)))), 9, 4), '-5',
    substring(hex(SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(session_id), ':', toString(sequence_number)))), 14, 3), '-',
    substring('89AB89AB89AB89AB', reinterpretAsUInt8(unhex(concat('0', substring(hex(SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(session_id), ':', toString(sequence_number)))), 17, 1)))) + 1, 1),
    substring(hex(SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(session_id), ':', toString(sequence_number)))), 18, 3), '-',
    substring(hex(SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(session_id), ':', toString(sequence_number)))), 21, 12))),
  -- the export's `data` object as JSON text (absent values are null)
  data String ALIAS multiIf(
    type = 'navigate', concat('{"from":', ifNull(toJSONString(nav_from), 'null'), ',"to":', toJSONString(nav_to), '}'),
    type = 'custom', concat('{"name":', toJSONString(name), ',"properties":', if(properties = '', 'null', properties), '}'),
    type = 'network', concat('{"method":', toJSONString(method), ',"url":', toJSONString(url),
      ',"statusCode":', ifNull(toJSONString(status_code), 'null'), ',"duration":', ifNull(toJSONString(duration), 'null'),
      ',"error":', ifNull(toJSONString(error), 'null'), '}'),
    concat('{"x":', ifNull(toJSONString(x), 'null'), ',"y":', ifNull(toJSONString(y), 'null'),
      ',"target":', ifNull(toJSONString(target), 'null'), '}'))
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(least(greatest(timestamp, toDateTime64('2020-01-01 00:00:00', 3, 'UTC')), toDateTime64('2099-12-31 00:00:00', 3, 'UTC')))
ORDER BY (project_id, session_id, sequence_number);

CREATE TABLE IF NOT EXISTS network_logs
(
  project_id LowCardinality(String),
  timestamp DateTime64(3, 'UTC') CODEC(DoubleDelta, LZ4),
  -- the request id (a mirrored network event: its event id); kept as text so that the export
  -- order (timestamp, id) stays the order of the id as written
  id String,
  session_id UUID,
  method LowCardinality(String),
  url String,
  status_code Nullable(Int32),
  duration Int64,
  request_size Nullable(Int64),
  response_size Nullable(Int64),
  error Nullable(String),
  -- the dashboard's network log of one session
  INDEX session_idx session_id TYPE bloom_filter GRANULARITY 4
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(least(greatest(timestamp, toDateTime64('2020-01-01 00:00:00', 3, 'UTC')), toDateTime64('2099-12-31 00:00:00', 3, 'UTC')))
ORDER BY (project_id, timestamp, id);

INSERT INTO events (project_id, session_id, sequence_number, type, timestamp, nav_from, nav_to, method, url, status_code, duration, error, name, properties, x, y, target)
SELECT project_id, toUUID(lower(session_id)), sequence_number, type, timestamp,
  JSONExtract(data, 'from', 'Nullable(String)'), JSONExtractString(data, 'to'), JSONExtractString(data, 'method'), JSONExtractString(data, 'url'),
  JSONExtract(data, 'statusCode', 'Nullable(Int32)'), JSONExtract(data, 'duration', 'Nullable(Int64)'), JSONExtract(data, 'error', 'Nullable(String)'),
  JSONExtractString(data, 'name'), if(JSONType(data, 'properties') = 'Object', JSONExtractRaw(data, 'properties'), ''),
  JSONExtract(data, 'x', 'Nullable(Float64)'), JSONExtract(data, 'y', 'Nullable(Float64)'), JSONExtract(data, 'target', 'Nullable(String)')
FROM events_v1 FINAL
SETTINGS throw_on_max_partitions_per_insert_block = 0;

INSERT INTO network_logs (project_id, timestamp, id, session_id, method, url, status_code, duration, request_size, response_size, error)
SELECT project_id, timestamp, id, toUUID(lower(session_id)), method, url, status_code, duration, request_size, response_size, error
FROM network_logs_v1 FINAL
SETTINGS throw_on_max_partitions_per_insert_block = 0;

DROP TABLE IF EXISTS events_v1;

DROP TABLE IF EXISTS network_logs_v1;

-- /ingest/events: one line per request. Numbers are read as Float64 (exact for every value the
-- schemas admit) so that any JSON spelling of a number (1e3, 1.0) reads as it did in the API.
CREATE TABLE IF NOT EXISTS events_ingest
(
  project_id String,
  body Tuple(
    sessionId String,
    events Array(Tuple(
      type String, sessionId String, timestamp Float64, sequenceNumber Float64,
      from Nullable(String), to String,
      method String, url String, statusCode Nullable(Float64), duration Nullable(Float64), error Nullable(String),
      name String, properties String,
      x Nullable(Float64), y Nullable(Float64), target Nullable(String))))
)
ENGINE = Null;

-- Per request, the session id is parsed once (the API checked that every event carries the
-- batch's); the ARRAY JOIN then only copies it. Numbers convert with CAST, not through text.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_ingest_mv TO events AS
SELECT project_id, sid AS session_id, CAST(e.sequenceNumber AS UInt64) AS sequence_number, e.type AS type,
  fromUnixTimestamp64Milli(CAST(e.timestamp AS Int64), 'UTC') AS timestamp,
  e.from AS nav_from, e.to AS nav_to, e.method AS method, e.url AS url,
  CAST(e.statusCode AS Nullable(Int32)) AS status_code, CAST(e.duration AS Nullable(Int64)) AS duration, e.error AS error,
  e.name AS name,
  -- a pretty-printed body keeps its line breaks in the raw object text; outside strings they
  -- are only whitespace, and the NDJSON export embeds `data` on one line
  if(position(e.properties, '\n') > 0 OR position(e.properties, '\r') > 0, replaceRegexpAll(e.properties, '[\r\n]', ' '), e.properties) AS properties,
  e.x AS x, e.y AS y, e.target AS target
FROM (SELECT project_id, toUUID(body.sessionId) AS sid, body.events AS events FROM events_ingest)
ARRAY JOIN events AS e;

-- Network events are mirrored into the network logs under their event id; only they are joined.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_ingest_network_mv TO network_logs AS
WITH lower(hex(SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(sid), ':', toString(CAST(e.sequenceNumber AS UInt64)))))) AS h
SELECT project_id, fromUnixTimestamp64Milli(CAST(e.timestamp AS Int64), 'UTC') AS timestamp,
  concat(substring(h, 1, 8), '-', substring(h, 9, 4), '-5', substring(h, 14, 3), '-',
    substring('89ab89ab89ab89ab', reinterpretAsUInt8(unhex(concat('0', substring(h, 17, 1)))) + 1, 1), substring(h, 18, 3), '-', substring(h, 21, 12)) AS id,
  sid AS session_id, e.method AS method, e.url AS url,
  CAST(e.statusCode AS Nullable(Int32)) AS status_code, CAST(ifNull(e.duration, 0) AS Int64) AS duration,
  CAST(NULL AS Nullable(Int64)) AS request_size, CAST(NULL AS Nullable(Int64)) AS response_size, e.error AS error
FROM (SELECT project_id, toUUID(body.sessionId) AS sid, arrayFilter(x -> x.type = 'network', body.events) AS network FROM events_ingest)
ARRAY JOIN network AS e;

-- /ingest/network: one line per request.
CREATE TABLE IF NOT EXISTS network_ingest
(
  project_id String,
  body Tuple(
    sessionId String,
    requests Array(Tuple(
      id String, method String, url String, statusCode Nullable(Float64), duration Float64,
      requestSize Nullable(Float64), responseSize Nullable(Float64), error Nullable(String), timestamp Float64)))
)
ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS network_ingest_mv TO network_logs AS
SELECT project_id, fromUnixTimestamp64Milli(CAST(r.timestamp AS Int64), 'UTC') AS timestamp, lower(r.id) AS id,
  sid AS session_id, r.method AS method, r.url AS url,
  CAST(r.statusCode AS Nullable(Int32)) AS status_code, CAST(r.duration AS Int64) AS duration,
  CAST(r.requestSize AS Nullable(Int64)) AS request_size, CAST(r.responseSize AS Nullable(Int64)) AS response_size, r.error AS error
FROM (SELECT project_id, toUUID(body.sessionId) AS sid, body.requests AS requests FROM network_ingest)
ARRAY JOIN requests AS r
