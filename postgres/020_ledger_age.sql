-- The occurrence ledger (018) pruned by age (docs/decisions.md, "Crash batches": "The ledger's
-- window"). It held one row per crash occurrence forever while the occurrences themselves leave
-- ClickHouse under RETENTION_DAYS; now the worker deletes rows older than CRASH_LEDGER_DAYS.
-- now() is stable, so existing rows take it without a table rewrite: they start their window at
-- the upgrade.
ALTER TABLE crash_occurrence_ledger ADD COLUMN IF NOT EXISTS recorded_at timestamptz NOT NULL DEFAULT now();
-- The pruning's range scan, oldest first.
CREATE INDEX IF NOT EXISTS crash_occurrence_ledger_recorded_idx ON crash_occurrence_ledger (recorded_at);
