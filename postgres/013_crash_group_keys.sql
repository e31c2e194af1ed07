-- Crash grouping on parsed frames (docs/decisions.md, "One bug, one group: grouping on parsed
-- frames"). A group may answer to several keys: its first occurrence's key, the key the current
-- rule gives a crash that joined it under the previous rule's key (an upgrade never splits a
-- group), and later the keys of groups merged into it. crash_groups.group_key stays the group's
-- own key: its occurrences are stored under it in ClickHouse, whichever key found the group.
CREATE TABLE IF NOT EXISTS crash_group_keys (
  project_id uuid NOT NULL REFERENCES projects(id),
  key text NOT NULL,
  group_id uuid NOT NULL REFERENCES crash_groups(id),
  -- the grouping rule that gave the key: 1 the first five normalised lines, 2 parsed frames
  rule_version integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, key)
);
CREATE INDEX IF NOT EXISTS crash_group_keys_group_idx ON crash_group_keys (group_id);

-- Every existing group keeps answering to the key it has (the previous rule's).
INSERT INTO crash_group_keys (project_id, key, group_id, rule_version)
SELECT project_id, group_key, id, 1 FROM crash_groups
ON CONFLICT (project_id, key) DO NOTHING;

-- A project's own packages, read as app frames by the group key (module or class prefixes such
-- as `com.acme.` or `@acme/`). NULL or empty: only the built-in system lists decide.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS in_app_packages text[];
