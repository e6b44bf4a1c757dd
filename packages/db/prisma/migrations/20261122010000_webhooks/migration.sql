-- Webhook delivery: retries live in webhook_deliveries.next_attempt_at, and e-mails to
-- merchants go through an outbox of their own, so neither a retry nor a notice exists only in memory.

-- A resend from the delivery log is one more attempt, not a new schedule: the delivery remembers
-- how many attempts it may make in all.
ALTER TABLE webhook_deliveries ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 8 CHECK (max_attempts > 0);

-- Notices to an organisation's owner (delivery failed, endpoint switched off), written in the same
-- DB transaction as the state change they report and sent by the dispatcher afterwards.
CREATE TABLE webhook_emails (
  id              TEXT PRIMARY KEY,
  endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints(id),
  kind            TEXT NOT NULL CHECK (kind IN ('delivery_failed', 'endpoint_disabled')),
  recipient       TEXT NOT NULL,
  subject         TEXT NOT NULL,
  body            TEXT NOT NULL,
  attempt_count   INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TIMESTAMPTZ(3),
  last_error      TEXT,
  sent_at         TIMESTAMPTZ(3),
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  CHECK ((sent_at IS NULL) = (next_attempt_at IS NOT NULL))
);
CREATE INDEX webhook_emails_unsent_idx ON webhook_emails (next_attempt_at) WHERE sent_at IS NULL;
-- Kept 30 days, like the delivery log.
CREATE INDEX webhook_emails_created_at_idx ON webhook_emails (created_at);
