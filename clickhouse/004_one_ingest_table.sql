-- One ingest table for every /ingest/events and /ingest/network body, and views that only rename.
--
-- Measured on the embedded engine (docs/bench.md): an insert through 002's pipeline cost a fixed
-- ~16 ms of CPU whatever its size, most of it the two events views being analysed and planned
-- again for every insert (the network mirror's id expression alone ~8 ms) and a part per target
-- table; /ingest/network bodies went through a second Null table, so a group-commit round wrote
-- three parts (events, the mirror's network logs, the requests' network logs) in two inserts.
-- Here both bodies share one Null table and one insert: the events view is renames only, and the
-- network view writes the mirrored events and the requests as one array, so a round writes two
-- parts. (A UNION ALL of two SELECTs would read better, but a view triggers on its left-most
-- SELECT only: the requests would be lost. Tested.) The body's fields are read as their stored types (UUID, UInt64, DateTime64 from Unix
-- milliseconds, Int32/Int64), not as Float64 converted in SQL; a number ClickHouse will not read
-- as that type (1.0, 1e3: valid JSON integers) fails the insert, and the API writes that body
-- once more as it serialises it (src/repos/ingest.ts), where such numbers are plain digits.
-- A body with line breaks is always written as serialised, so `properties` never holds one.
--
-- The mirrored event's id is the event id, RFC 4122 v5 of "<sessionId>:<sequenceNumber>"
-- (src/domain/ids.ts): SHA-1's first 16 bytes with the version and variant bits set, printed by
-- UUIDNumToString (the same text as events.id, tested).

CREATE TABLE IF NOT EXISTS ingest
(
  project_id String,
  body Tuple(
    sessionId UUID,
    events Array(Tuple(
      type String, timestamp DateTime64(3, 'UTC'), sequenceNumber UInt64,
      from Nullable(String), to String,
      method String, url String, statusCode Nullable(Int32), duration Nullable(Int64), error Nullable(String),
      name String, properties String,
      x Nullable(Float64), y Nullable(Float64), target Nullable(String))),
    requests Array(Tuple(
      id String, method String, url String, statusCode Nullable(Int32), duration Int64,
      requestSize Nullable(Int64), responseSize Nullable(Int64), error Nullable(String), timestamp DateTime64(3, 'UTC'))))
)
ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS ingest_events_mv TO events AS
SELECT project_id, body.sessionId AS session_id, e.sequenceNumber AS sequence_number, e.type AS type, e.timestamp AS timestamp,
  e.from AS nav_from, e.to AS nav_to, e.method AS method, e.url AS url, e.statusCode AS status_code, e.duration AS duration,
  e.error AS error, e.name AS name, e.properties AS properties, e.x AS x, e.y AS y, e.target AS target
FROM ingest
ARRAY JOIN body.events AS e;

CREATE MATERIALIZED VIEW IF NOT EXISTS ingest_network_mv TO network_logs AS
SELECT project_id, n.1 AS timestamp, n.2 AS id, body.sessionId AS session_id, n.3 AS method, n.4 AS url, n.5 AS status_code,
  n.6 AS duration, n.7 AS request_size, n.8 AS response_size, n.9 AS error
FROM ingest
ARRAY JOIN arrayConcat(
  arrayMap(r -> (r.timestamp, lower(r.id), r.method, r.url, r.statusCode, r.duration, r.requestSize, r.responseSize, r.error), body.requests),
  arrayMap(p -> (tupleElement(p.1, 'timestamp'),
      UUIDNumToString(toFixedString(concat(substring(p.2, 1, 6), char(bitOr(bitAnd(reinterpretAsUInt8(substring(p.2, 7, 1)), 15), 80)), substring(p.2, 8, 1),
        char(bitOr(bitAnd(reinterpretAsUInt8(substring(p.2, 9, 1)), 63), 128)), substring(p.2, 10, 7)), 16)),
      tupleElement(p.1, 'method'), tupleElement(p.1, 'url'), tupleElement(p.1, 'statusCode'), ifNull(tupleElement(p.1, 'duration'), 0),
      CAST(NULL AS Nullable(Int64)), CAST(NULL AS Nullable(Int64)), tupleElement(p.1, 'error')),
    arrayMap(e -> (e, SHA1(concat(unhex('6f1c9a3e5b2d4c8e9a7f1b3d5e7c9a1b'), toString(body.sessionId), ':', toString(e.sequenceNumber)))),
      arrayFilter(e -> e.type = 'network', body.events)))) AS n;

DROP VIEW IF EXISTS events_ingest_mv;

DROP VIEW IF EXISTS events_ingest_network_mv;

DROP VIEW IF EXISTS network_ingest_mv;

DROP TABLE IF EXISTS events_ingest;

DROP TABLE IF EXISTS network_ingest
