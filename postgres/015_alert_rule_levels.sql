-- A spike rule may count only some crash levels (docs/decisions.md, "Crash context"): NULL counts
-- crashes and errors (fatal, error), as every rule did before messages existed; ['info','warning']
-- alerts on messages.
ALTER TABLE alert_rules ADD COLUMN IF NOT EXISTS levels text[];
