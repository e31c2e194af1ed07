-- Crashes recorded a batch at a time, and a crash list that pages in Postgres (issue 31; docs/decisions.md,
-- "Crash batches and the paged crash list"). A group's counters are kept here, one UPDATE per group per
-- batch (never one per occurrence): the list filters, sorts and pages on them with an index. The
-- occurrences themselves stay in ClickHouse, which the page's figures are still read from.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- crash_* count occurrences of the levels fatal and error (the list's default), message_* of warning
-- and info (kind=message); users are distinct user ids. NULL last-seen: none of that class yet.
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS crash_occurrences bigint NOT NULL DEFAULT 0;
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS fatal_occurrences bigint NOT NULL DEFAULT 0;
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS crash_users bigint NOT NULL DEFAULT 0;
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS crash_last_seen_at bigint;
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS message_occurrences bigint NOT NULL DEFAULT 0;
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS message_users bigint NOT NULL DEFAULT 0;
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS message_last_seen_at bigint;
-- Groups made before this migration are counted from ClickHouse once, the first time their project's
-- list is read (services/crashGroups.ts); groups made from now on are counted as they are recorded.
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS counted boolean NOT NULL DEFAULT false;
ALTER TABLE crash_groups ALTER COLUMN counted SET DEFAULT true;
CREATE INDEX IF NOT EXISTS crash_groups_uncounted_idx ON crash_groups (project_id) WHERE NOT counted;

-- Each occurrence counted once: a replayed batch, a retried report, a second process all meet
-- the occurrence's id here, in the transaction that counts it.
CREATE TABLE IF NOT EXISTS crash_occurrence_ledger (
  project_id uuid NOT NULL,
  id text NOT NULL,
  group_id uuid NOT NULL,
  PRIMARY KEY (project_id, id)
);
-- Each group's users of each class (0 crash levels, 1 message levels), so a user counts once.
CREATE TABLE IF NOT EXISTS crash_group_users (
  group_id uuid NOT NULL,
  cls smallint NOT NULL,
  user_key text NOT NULL,
  PRIMARY KEY (group_id, cls, user_key)
);

-- The list's orders (descending, ties by id descending: one backward-free index scan each).
CREATE INDEX IF NOT EXISTS crash_groups_list_last_idx ON crash_groups (project_id, crash_last_seen_at DESC, id DESC)
  WHERE merged_into IS NULL AND crash_occurrences > 0;
CREATE INDEX IF NOT EXISTS crash_groups_list_status_last_idx ON crash_groups (project_id, status, crash_last_seen_at DESC, id DESC)
  WHERE merged_into IS NULL AND crash_occurrences > 0;
CREATE INDEX IF NOT EXISTS crash_groups_list_first_idx ON crash_groups (project_id, first_seen_at DESC, id DESC)
  WHERE merged_into IS NULL AND crash_occurrences > 0;
CREATE INDEX IF NOT EXISTS crash_groups_list_occurrences_idx ON crash_groups (project_id, crash_occurrences DESC, id DESC)
  WHERE merged_into IS NULL AND crash_occurrences > 0;
CREATE INDEX IF NOT EXISTS crash_groups_list_users_idx ON crash_groups (project_id, crash_users DESC, id DESC)
  WHERE merged_into IS NULL AND crash_occurrences > 0;
-- The search: a substring of the message (its type is its first word) or of the stack's head
-- (functions, files), case-insensitive.
CREATE INDEX IF NOT EXISTS crash_groups_search_idx ON crash_groups USING gin ((message || ' ' || stack_head) gin_trgm_ops);
