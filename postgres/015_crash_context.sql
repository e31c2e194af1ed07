-- Crash context (docs/decisions.md, "Crash context").
-- A spike rule may count only some crash levels: NULL counts crashes and errors (fatal, error),
-- as every rule did before messages existed; ['info','warning'] alerts on messages.
ALTER TABLE alert_rules ADD COLUMN IF NOT EXISTS levels text[];

-- The environment a session started in (production, staging), optional: release health filters
-- on it, and a crash report that names none takes its session's.
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS environment text;
