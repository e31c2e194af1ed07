-- The dashboard's investigation and onboarding needs.

-- A key is recognised by its visible start (frk_ab12…), never by the internal id, and named by
-- whoever made it. Keys made before this migration keep a NULL prefix (the plaintext is gone).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS prefix text;
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS name text;

-- What a person investigating a crash asks of each occurrence: the whole stack trace (bounded
-- by the ingest schema's 256 KiB), its message, and who and what it happened to, copied from
-- the session when the crash is recorded (append-only facts, as they will be in ClickHouse).
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS stack_trace text;
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS message text;
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS handled boolean;
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS user_id text;
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS platform text;
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS os_version text;
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS brand text;
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS model text;
CREATE INDEX IF NOT EXISTS crash_occurrences_latest_idx ON crash_occurrences (project_id, group_key, occurred_at DESC);

-- When a summary was written, so an AI summary can say how old it is.
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS summary_at timestamptz;
