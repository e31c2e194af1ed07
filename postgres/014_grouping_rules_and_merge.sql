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
