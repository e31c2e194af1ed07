-- Hardening after the security probe (docs/reliability.md, Security).

-- Key scopes: what a key may do. The key an app embeds needs only ingest; a key that can
-- export reads the whole project, so apps should not carry one.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS scopes text[] NOT NULL DEFAULT '{ingest,export}';

-- Alert addresses a project's list names, and whether their owner confirmed them. An address
-- is mailed crash alerts only once confirmed, so the list cannot be used to mail strangers.
-- token_hash: SHA-256 of the confirmation link's token (the plaintext is only in the email).
-- mailed_at: when the confirmation email went out (NULL: the worker still has to send it).
CREATE TABLE IF NOT EXISTS alert_recipients (
  project_id uuid NOT NULL REFERENCES projects(id),
  email text NOT NULL,
  token_hash text UNIQUE,
  mailed_at timestamptz,
  confirmed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, email)
);

-- Alert throttling: when the project's last alert (or digest) went out, and by which job.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS alert_sent_at timestamptz;
-- the outbox job that took the slot: its own retry is not held back by it
ALTER TABLE projects ADD COLUMN IF NOT EXISTS alert_slot_job bigint;

-- Team invitations: an owner invites by email; the person joins only by accepting.
CREATE TABLE IF NOT EXISTS team_invitations (
  id uuid PRIMARY KEY,
  team_id uuid NOT NULL REFERENCES teams(id),
  email text NOT NULL,
  invited_by uuid NOT NULL REFERENCES users(id),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (team_id, email)
);
CREATE INDEX IF NOT EXISTS team_invitations_email_idx ON team_invitations (email);
