-- A crash group's activity (issue 22, item 2): its status history, its assignee and a comment
-- thread; and the marker of the one-off copy of existing sessions into ClickHouse session facts.

-- Every status change of a group: by hand (actor: 'admin' for the management API, else the
-- account's email, with its id), or a regression (actor 'flightrec', kind 'regression', with the
-- app version and platform of the occurrence that reopened it). Assignments are recorded too.
CREATE TABLE IF NOT EXISTS crash_group_history (
  id bigserial PRIMARY KEY,
  project_id uuid NOT NULL,
  group_id uuid NOT NULL REFERENCES crash_groups(id) ON DELETE CASCADE,
  at bigint NOT NULL,
  kind text NOT NULL CHECK (kind IN ('status', 'regression', 'assignee')),
  from_status text,
  to_status text,
  actor text NOT NULL,
  actor_user_id uuid,
  app_version text,
  platform text,
  detail text
);
CREATE INDEX IF NOT EXISTS crash_group_history_group_idx ON crash_group_history (group_id, at, id);
CREATE INDEX IF NOT EXISTS crash_group_history_regressions_idx ON crash_group_history (project_id) WHERE kind = 'regression';

CREATE TABLE IF NOT EXISTS crash_group_assignees (
  group_id uuid PRIMARY KEY REFERENCES crash_groups(id) ON DELETE CASCADE,
  project_id uuid NOT NULL,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  assigned_at bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS crash_group_comments (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL,
  group_id uuid NOT NULL REFERENCES crash_groups(id) ON DELETE CASCADE,
  author text NOT NULL,
  author_user_id uuid,
  body text NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS crash_group_comments_group_idx ON crash_group_comments (group_id, created_at, id);

-- Set once start-up has copied the sessions that predate release health (src/repos/sessionFactsBackfill.ts).
CREATE TABLE IF NOT EXISTS session_facts_backfill (
  id integer PRIMARY KEY CHECK (id = 1),
  sessions bigint NOT NULL,
  done_at timestamptz NOT NULL DEFAULT now()
)
