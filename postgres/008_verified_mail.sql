-- The third security probe (docs/decisions.md, "Verified addresses, bounded mail"): email
-- addresses are verified before they count for anything, outbound mail and AI calls are
-- bounded, every alert can be unsubscribed from, and keys record who made them.

-- An account's address is verified by a link (the token's SHA-256 is stored, it expires).
-- verify_requested_at: a link is wanted (sign-up, "resend"); verify_mailed_at: the last went out.
ALTER TABLE users ADD COLUMN IF NOT EXISTS email_verified_at timestamptz;
ALTER TABLE users ADD COLUMN IF NOT EXISTS verify_token_hash text;
ALTER TABLE users ADD COLUMN IF NOT EXISTS verify_expires_at timestamptz;
ALTER TABLE users ADD COLUMN IF NOT EXISTS verify_requested_at timestamptz;
ALTER TABLE users ADD COLUMN IF NOT EXISTS verify_mailed_at timestamptz;
CREATE UNIQUE INDEX IF NOT EXISTS users_verify_token_idx ON users (verify_token_hash) WHERE verify_token_hash IS NOT NULL;
-- The worker's sweep reads the accounts waiting for a link every round: only those are indexed.
CREATE INDEX IF NOT EXISTS users_verify_pending_idx ON users (verify_requested_at) WHERE email_verified_at IS NULL;
-- Accounts made before this migration are NOT taken as verified: anyone could have signed up
-- with an address that has an invitation waiting. Each is mailed one link instead.
UPDATE users SET verify_requested_at = now() WHERE email_verified_at IS NULL AND verify_requested_at IS NULL;

-- Invitations are mailed to the invitee (mailed_at NULL: the worker still has to).
ALTER TABLE team_invitations ADD COLUMN IF NOT EXISTS mailed_at timestamptz;
CREATE INDEX IF NOT EXISTS team_invitations_unmailed_idx ON team_invitations (created_at) WHERE mailed_at IS NULL;

-- Alert-list confirmation links expire. Links mailed before had no expiry: pending addresses
-- are mailed a fresh link.
ALTER TABLE alert_recipients ADD COLUMN IF NOT EXISTS token_expires_at timestamptz;
UPDATE alert_recipients SET mailed_at = NULL, token_hash = NULL WHERE confirmed_at IS NULL;

-- Every email the service sends, by recipient and by the account it is sent on behalf of, for
-- the daily caps. Rows older than two days serve no cap and are deleted as mail goes out.
CREATE TABLE IF NOT EXISTS mail_log (
  id bigserial PRIMARY KEY,
  kind text NOT NULL,
  recipient text NOT NULL,
  account_id uuid,
  sent_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS mail_log_recipient_idx ON mail_log (recipient, sent_at);
CREATE INDEX IF NOT EXISTS mail_log_account_idx ON mail_log (account_id, sent_at) WHERE account_id IS NOT NULL;

-- AI summary calls per project per UTC day (the per-project budget).
CREATE TABLE IF NOT EXISTS ai_usage (
  project_id uuid NOT NULL,
  day date NOT NULL,
  calls int NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, day)
);

-- Addresses that unsubscribed from a project's alerts (the signed link in every alert).
CREATE TABLE IF NOT EXISTS alert_unsubscribes (
  project_id uuid NOT NULL REFERENCES projects(id),
  email text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, email)
);

-- Secrets the service makes for itself (the key that signs unsubscribe links), shared by every
-- process through the database.
CREATE TABLE IF NOT EXISTS service_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Who made a key (NULL: the operator, or a key made before this migration).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS created_by uuid REFERENCES users(id);
