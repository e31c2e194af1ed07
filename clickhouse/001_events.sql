-- Events keep one row per (project, session, sequenceNumber): a retried batch replaces the rows
-- it repeats on merge, and reads use FINAL. The sort key is also the export order.
CREATE TABLE IF NOT EXISTS events
(
  project_id LowCardinality(String),
  session_id String,
  sequence_number UInt64,
  id String,
  type LowCardinality(String),
  timestamp DateTime64(3, 'UTC'),
  data String,
  inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, session_id, sequence_number);

-- Network logs, from /ingest/network and mirrored from network events. Identity and export
-- order are (project, timestamp, id).
CREATE TABLE IF NOT EXISTS network_logs
(
  project_id LowCardinality(String),
  timestamp DateTime64(3, 'UTC'),
  id String,
  session_id String,
  method String,
  url String,
  status_code Nullable(Int32),
  duration Int64,
  request_size Nullable(Int64),
  response_size Nullable(Int64),
  error Nullable(String),
  inserted_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, timestamp, id);
