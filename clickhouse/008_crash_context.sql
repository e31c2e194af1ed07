-- Crash context (docs/decisions.md, "Crash context"): the optional fields of a crash report, kept
-- with its occurrence. The report's own userId, when it sent one, is stored in user_id (it
-- overrides the session's). Rows written before this migration read their level from is_fatal,
-- as the default rule gives it; the others read as empty.
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS environment LowCardinality(String) DEFAULT '';
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS level LowCardinality(String) DEFAULT if(is_fatal, 'fatal', 'error');
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS tags Map(String, String);
-- JSON text, bounded at ingest (8 KiB, 32 KiB); '' when none was sent
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS context String DEFAULT '' CODEC(ZSTD(3));
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS breadcrumbs String DEFAULT '' CODEC(ZSTD(3));
-- what the report sent that was not kept, as JSON [{field, reason}] ('' when nothing)
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS dropped String DEFAULT ''
