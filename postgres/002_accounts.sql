-- Accounts (issue 7): users, teams and their members, server-side log-in sessions, and the
-- team that owns a project. Projects created through the admin API keep team_id NULL.

CREATE TABLE IF NOT EXISTS users (
  id uuid PRIMARY KEY,
  -- stored trimmed and lower-cased, so uniqueness is case-insensitive
  email text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  suspended_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS teams (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  owner_id uuid NOT NULL REFERENCES users(id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS teams_owner_idx ON teams (owner_id);

CREATE TABLE IF NOT EXISTS team_members (
  team_id uuid NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX IF NOT EXISTS team_members_user_idx ON team_members (user_id);

-- Only the SHA-256 of a session token is stored: a leaked table opens no session.
CREATE TABLE IF NOT EXISTS user_sessions (
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS user_sessions_user_idx ON user_sessions (user_id);

ALTER TABLE projects ADD COLUMN IF NOT EXISTS team_id uuid REFERENCES teams(id);
CREATE INDEX IF NOT EXISTS projects_team_idx ON projects (team_id);

-- Set on the keys that a suspension turned off, so that lifting it turns on those and no
-- key that was deactivated by hand.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS suspended_at timestamptz;
