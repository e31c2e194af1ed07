-- Alert rules of kind 'crash_free_regression': a release's crash-free sessions significantly
-- below the previous release's (their 95 % Wilson intervals do not overlap; threshold: the gap
-- in points the intervals must leave between them, 0 by default). A firing keeps the sentence
-- it said (the two releases and their intervals), which its email and webhook repeat.
ALTER TABLE alert_rules DROP CONSTRAINT IF EXISTS alert_rules_kind_check;
ALTER TABLE alert_rules ADD CONSTRAINT alert_rules_kind_check CHECK (kind IN ('spike', 'crash_free', 'crash_free_regression'));
ALTER TABLE alert_rule_firings ADD COLUMN IF NOT EXISTS detail text;
