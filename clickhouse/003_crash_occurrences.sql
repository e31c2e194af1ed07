-- Crash occurrences: append-only facts, one row per report, with the session's context copied in.
-- A crash group's counters (occurrenceCount, affectedDevices, lastSeenAt, the latest context) are
-- aggregated from these rows at read; Postgres keeps only the group's identity and workflow, so a
-- storm of one crash writes no Postgres row per report (docs/decisions.md, Crashes).
--
-- Identity is (project_id, id), id being the SHA-256 of the whole payload: a retried report is
-- the same row, collapsed by merges, and reads count uniqExact(id) (or use FINAL). group_key sits
-- between them in the sort key because it is a function of id (the payload holds the stack
-- trace), so the key still identifies one occurrence, and a group's rows are read as one range.
CREATE TABLE IF NOT EXISTS crash_occurrences
(
  project_id LowCardinality(String),
  group_key String,
  id String,
  occurred_at DateTime64(3, 'UTC') CODEC(DoubleDelta, LZ4),
  session_id UUID,
  user_id Nullable(String),
  device_fingerprint String,
  platform LowCardinality(Nullable(String)),
  os_version LowCardinality(Nullable(String)),
  app_version LowCardinality(Nullable(String)),
  brand LowCardinality(Nullable(String)),
  model Nullable(String),
  message String,
  stack_trace String CODEC(ZSTD(3)),
  is_fatal Bool,
  handled Bool,
  -- the dashboard's crashes of one session
  INDEX session_idx session_id TYPE bloom_filter GRANULARITY 4
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(least(greatest(occurred_at, toDateTime64('2020-01-01 00:00:00', 3, 'UTC')), toDateTime64('2099-12-31 00:00:00', 3, 'UTC')))
ORDER BY (project_id, group_key, id)
