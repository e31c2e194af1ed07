-- Readable crash stacks (docs/decisions.md, "Crash grouping on the normalised stack" and
-- "Symbolication").

-- A fatal crash gives its session a provisional end at the crash's timestamp, so a crashed
-- session has a duration and sorts right; an explicit /ingest/session/end afterwards replaces
-- it once (the first accepted endedAt of the contract is the first explicit one).
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS end_provisional boolean NOT NULL DEFAULT false;

-- Build artifacts a release uploads for symbolication: JavaScript source maps (and, optionally,
-- the minified sources they describe) and R8/ProGuard mapping files. `release` is the app's
-- version, or version+build ("1.4.0+312") for one build only. The bytes are stored gzip'd;
-- size_bytes is the uncompressed size, which the per-artifact and per-project limits count.
CREATE TABLE IF NOT EXISTS release_artifacts (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  release text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('sourcemap', 'minified', 'proguard')),
  name text NOT NULL,
  size_bytes bigint NOT NULL,
  sha256 text NOT NULL,
  content bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, release, kind, name)
)
