-- Alert rules beyond the first occurrence (issue 22, item 3): regressions, spike and crash-free
-- rules, webhooks and their delivery log. Every notification still goes through alert_outbox.

-- An outbox job's subject besides a crash group: the app version that reopened a group (one
-- regression per version, since resolving again snapshots it), a rule firing, a webhook
-- delivery. Rule and webhook jobs have no crash group.
ALTER TABLE alert_outbox ADD COLUMN IF NOT EXISTS ref text;

ALTER TABLE alert_outbox ALTER COLUMN group_id DROP NOT NULL;

-- One job per (kind, group, ref): still one new-group alert per group (no ref), one regression
-- job per group and version, one job per webhook delivery. Spelled with COALESCE so that jobs
-- without a group collide too (a unique index treats NULLs as distinct).
CREATE UNIQUE INDEX IF NOT EXISTS alert_outbox_subject_key ON alert_outbox (kind, (COALESCE(group_id::text, '')), (COALESCE(ref, '')));

ALTER TABLE alert_outbox DROP CONSTRAINT IF EXISTS alert_outbox_group_id_kind_key;

-- Webhooks of a project. The secret signs every delivery (HMAC-SHA256), so it is kept as is:
-- shown once at creation, never read back by the API, never logged.
CREATE TABLE IF NOT EXISTS webhooks (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  url text NOT NULL,
  secret text NOT NULL,
  events text[] NOT NULL DEFAULT '{}',
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- throttle: deliveries started in the current minute
  window_started_at timestamptz,
  window_count integer NOT NULL DEFAULT 0
);

CREATE INDEX IF NOT EXISTS webhooks_project_idx ON webhooks (project_id, created_at);

-- Rules: kind 'spike' (a group passes threshold occurrences in window_minutes) or 'crash_free'
-- (a release's crash-free sessions fall below threshold % over window_minutes, once it has
-- min_sessions sessions). emails: null = the project's alert recipients, [] = none.
CREATE TABLE IF NOT EXISTS alert_rules (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('spike', 'crash_free')),
  threshold double precision NOT NULL,
  window_minutes integer NOT NULL,
  min_sessions integer NOT NULL DEFAULT 0,
  cooldown_minutes integer NOT NULL DEFAULT 60,
  emails text[],
  webhook_ids uuid[] NOT NULL DEFAULT '{}',
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS alert_rules_project_idx ON alert_rules (project_id, created_at);

-- A rule's state per subject (a crash group's key, or an app version): fired once per crossing,
-- re-armed when the value is back on the safe side.
CREATE TABLE IF NOT EXISTS alert_rule_state (
  rule_id uuid NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
  subject text NOT NULL,
  fired boolean NOT NULL DEFAULT false,
  last_fired_at timestamptz,
  last_value double precision,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rule_id, subject)
);

-- What the rule said when it fired, read by the email and webhook jobs it enqueued.
CREATE TABLE IF NOT EXISTS alert_rule_firings (
  id uuid PRIMARY KEY,
  rule_id uuid NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
  project_id uuid NOT NULL,
  subject text NOT NULL,
  group_id uuid,
  value double precision NOT NULL,
  sessions integer,
  fired_at timestamptz NOT NULL DEFAULT now()
);

-- The delivery log: one row per event sent to a webhook, updated at each attempt.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id uuid PRIMARY KEY,
  webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  project_id uuid NOT NULL,
  event text NOT NULL,
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  response_code integer,
  latency_ms integer,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_attempt_at timestamptz,
  delivered_at timestamptz
);

CREATE INDEX IF NOT EXISTS webhook_deliveries_project_idx ON webhook_deliveries (project_id, created_at DESC)
