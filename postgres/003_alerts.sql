-- Bookkeeping for the alert outbox worker (issue 4).
-- lease_token: fences a claim, so a worker whose lease expired cannot record over the worker
-- that retook the job. sent_at / message_id: the email went out, so a retry does not resend.
-- note: why a job finished without sending (no recipients).
ALTER TABLE alert_outbox ADD COLUMN IF NOT EXISTS lease_token uuid;
ALTER TABLE alert_outbox ADD COLUMN IF NOT EXISTS sent_at timestamptz;
ALTER TABLE alert_outbox ADD COLUMN IF NOT EXISTS message_id text;
ALTER TABLE alert_outbox ADD COLUMN IF NOT EXISTS note text;
