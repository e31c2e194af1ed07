-- Fingerprint rules (issue 29): a project's rules, read in order (position ascending); the first
-- that matches a crash gives its group key. `match` holds glob patterns on type, message, module
-- and function (src/domain/fingerprintRules.ts); `fingerprint` the strings the key is made of.
CREATE TABLE IF NOT EXISTS fingerprint_rules (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  position integer NOT NULL,
  match jsonb NOT NULL,
  fingerprint text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS fingerprint_rules_project_idx ON fingerprint_rules (project_id, position);

-- Merged crash groups (issue 29): a person merges groups into one they keep. The merged group's
-- keys (crash_group_keys) then lead to the kept group, and the merged row stays, marked, so its
-- id still answers (with the kept group) and its own key still names the ClickHouse occurrences
-- stored under it: a kept group's occurrences are those of its key and of its merged groups' keys.
ALTER TABLE crash_groups ADD COLUMN IF NOT EXISTS merged_into uuid REFERENCES crash_groups(id);

CREATE INDEX IF NOT EXISTS crash_groups_merged_into_idx ON crash_groups (merged_into) WHERE merged_into IS NOT NULL;

-- A merge is part of the kept group's history (detail: the merged groups' ids).
ALTER TABLE crash_group_history DROP CONSTRAINT IF EXISTS crash_group_history_kind_check;

ALTER TABLE crash_group_history ADD CONSTRAINT crash_group_history_kind_check CHECK (kind IN ('status', 'regression', 'assignee', 'merge'));
