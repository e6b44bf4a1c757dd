-- The console's log-in and security (docs/decisions/0150-… to 0155-…): one active account per
-- e-mail address with invitations per organisation, wrong second-factor codes counted per log-in,
-- recovery codes, secrets shown once from short-lived records, and e-mails orders-api asks the
-- webhook dispatcher to send.

-- An address is one active account anywhere (activated_at: the first password was set; it stays
-- set through a reset), and one person per organisation; an invitation of an address that is
-- active elsewhere is a user row that can never be activated, so inviting reveals nothing.
ALTER TABLE users ADD COLUMN activated_at TIMESTAMPTZ(3);
UPDATE users SET activated_at = updated_at WHERE password_hash IS NOT NULL;
ALTER TABLE users ADD CONSTRAINT users_activated_check CHECK (password_hash IS NULL OR activated_at IS NOT NULL);
DROP INDEX users_email_key;
CREATE UNIQUE INDEX users_organisation_email_key ON users (organisation_id, email);
CREATE UNIQUE INDEX users_active_email_key ON users (email) WHERE activated_at IS NOT NULL;

-- Wrong codes given for one log-in's second factor; the log-in ends at the limit.
ALTER TABLE console_sessions ADD COLUMN second_factor_failures INTEGER NOT NULL DEFAULT 0 CHECK (second_factor_failures >= 0);

-- One-time recovery codes of a person's second factor, by the SHA-256 of each (80 random bits).
CREATE TABLE user_recovery_codes (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  created_at TIMESTAMPTZ(3) NOT NULL,
  used_at TIMESTAMPTZ(3),
  PRIMARY KEY (user_id, code_hash)
);

-- A secret to show once (an API key, a signing secret, recovery codes, a set-up link), sealed,
-- for the page the action redirects to: read and deleted by that session's next GET, or gone
-- after a few minutes.
CREATE TABLE console_displays (
  id TEXT PRIMARY KEY,
  session_id_hash TEXT NOT NULL REFERENCES console_sessions (id_hash) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('api_key', 'webhook_secret', 'recovery_codes', 'setup_link')),
  sealed TEXT NOT NULL,
  created_at TIMESTAMPTZ(3) NOT NULL,
  expires_at TIMESTAMPTZ(3) NOT NULL
);
CREATE INDEX console_displays_session_idx ON console_displays (session_id_hash);
CREATE INDEX console_displays_expires_idx ON console_displays (expires_at);

-- The dispatcher's e-mail queue also carries the console's mail (invitations, password resets),
-- which names no webhook endpoint.
ALTER TABLE webhook_emails ALTER COLUMN endpoint_id DROP NOT NULL;
ALTER TABLE webhook_emails DROP CONSTRAINT webhook_emails_kind_check;
ALTER TABLE webhook_emails ADD CONSTRAINT webhook_emails_kind_check
  CHECK (kind IN ('delivery_failed', 'endpoint_disabled', 'console_invitation', 'console_password_reset', 'console_access_reset'));
ALTER TABLE webhook_emails ADD CONSTRAINT webhook_emails_endpoint_check
  CHECK ((endpoint_id IS NOT NULL) = (kind IN ('delivery_failed', 'endpoint_disabled')));

-- orders-api writes the console's mail and never reads the queue back.
GRANT INSERT ON webhook_emails TO pmatch_orders_api;
GRANT SELECT, INSERT, UPDATE, DELETE ON user_recovery_codes, console_displays TO pmatch_orders_api;
-- ops resets a person's access: their sessions and recovery codes end.
GRANT SELECT, DELETE ON console_sessions, user_recovery_codes TO pmatch_ops;
