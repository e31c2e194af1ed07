-- Projects, their API keys (hashed), sessions, crash groups and occurrences, alert outbox.
-- Timestamps that come from SDKs are kept as Unix milliseconds (bigint), as sent.

CREATE TABLE IF NOT EXISTS projects (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  alert_emails text[],
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS api_keys (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  key_hash text NOT NULL UNIQUE,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  deactivated_at timestamptz
);
CREATE INDEX IF NOT EXISTS api_keys_project_idx ON api_keys (project_id);

-- A session id is the SDK's; it is unique within a project, and another project's session of
-- the same id is simply not found (404), never shared.
CREATE TABLE IF NOT EXISTS sessions (
  project_id uuid NOT NULL REFERENCES projects(id),
  id uuid NOT NULL,
  user_id text,
  platform text,
  os_version text,
  model text,
  brand text,
  app_version text,
  app_build_number text,
  sdk_version text,
  locale text,
  timezone text,
  screen_width integer,
  screen_height integer,
  network_type text,
  device_fingerprint text NOT NULL,
  started_at bigint NOT NULL,
  ended_at bigint,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'crashed')),
  has_crash boolean NOT NULL DEFAULT false,
  has_network_errors boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id)
);
CREATE INDEX IF NOT EXISTS sessions_export_idx ON sessions (project_id, started_at, id);

CREATE TABLE IF NOT EXISTS crash_groups (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  group_key text NOT NULL,
  message text NOT NULL,
  stack_head text NOT NULL,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'resolved', 'ignored')),
  is_fatal boolean NOT NULL,
  handled boolean NOT NULL,
  occurrence_count integer NOT NULL DEFAULT 0,
  affected_devices integer NOT NULL DEFAULT 0,
  platform text,
  app_version text,
  os_version text,
  first_seen_at bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  -- every app version the crash was seen in, and the ones seen when it was last resolved
  app_versions text[] NOT NULL DEFAULT '{}',
  resolved_versions text[] NOT NULL DEFAULT '{}',
  summary text,
  summary_source text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, group_key)
);
CREATE INDEX IF NOT EXISTS crash_groups_export_idx ON crash_groups (project_id, first_seen_at, id);

CREATE TABLE IF NOT EXISTS crash_occurrences (
  project_id uuid NOT NULL,
  id text NOT NULL,
  -- the group is found by key: the occurrence row is written first, so that a concurrent
  -- retry of the same report waits on it and then adds nothing
  group_key text NOT NULL,
  session_id uuid NOT NULL,
  device_fingerprint text NOT NULL,
  app_version text,
  occurred_at bigint NOT NULL,
  is_fatal boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, id)
);
CREATE INDEX IF NOT EXISTS crash_occurrences_group_idx ON crash_occurrences (project_id, group_key);

CREATE TABLE IF NOT EXISTS crash_group_devices (
  group_id uuid NOT NULL REFERENCES crash_groups(id),
  device_fingerprint text NOT NULL,
  PRIMARY KEY (group_id, device_fingerprint)
);

-- First-occurrence side effects, enqueued in the transaction that creates the group.
CREATE TABLE IF NOT EXISTS alert_outbox (
  id bigserial PRIMARY KEY,
  project_id uuid NOT NULL,
  group_id uuid NOT NULL REFERENCES crash_groups(id),
  kind text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  done_at timestamptz,
  UNIQUE (group_id, kind)
);
CREATE INDEX IF NOT EXISTS alert_outbox_due_idx ON alert_outbox (next_attempt_at) WHERE status = 'pending';
