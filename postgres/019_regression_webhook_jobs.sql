-- A regression's webhook posts become a job of their own ('crash_group_regressed_webhooks'),
-- enqueued with the reopening like a new group's; the regression job keeps only its email.
-- Regression jobs still waiting at the upgrade get their webhook job here, so none loses its posts
-- (the job finds the project's subscribed webhooks when it runs; none: nothing is posted).
INSERT INTO alert_outbox (project_id, group_id, kind, ref)
SELECT project_id, group_id, 'crash_group_regressed_webhooks', ref
FROM alert_outbox
WHERE kind = 'crash_group_regressed' AND status = 'pending'
ON CONFLICT DO NOTHING;
