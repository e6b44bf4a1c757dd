-- The seller console (orders-api, /dashboard/): people of an organisation who log in, their
-- sessions, and the audit log of what they did. docs/decisions/0051-console-sessions-in-the-database.md
-- says why sessions are rows and not signed cookies.

-- Users belong to one organisation; an e-mail address is one user anywhere (kept lower-case).
-- password_hash is NULL until the person has set a password through their one-time setup link,
-- found by the SHA-256 of its token (the token itself is never stored).
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations (id),
  email TEXT NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
  role TEXT NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
  password_hash TEXT,
  password_setup_hash TEXT,
  password_setup_expires_at TIMESTAMPTZ(3),
  totp_secret_encrypted TEXT,
  totp_enabled_at TIMESTAMPTZ(3),
  -- The last time step a code was accepted for: a code is good once.
  totp_last_step BIGINT,
  created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  CHECK ((password_setup_hash IS NULL) = (password_setup_expires_at IS NULL)),
  CHECK (totp_enabled_at IS NULL OR totp_secret_encrypted IS NOT NULL)
);
CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE UNIQUE INDEX users_password_setup_key ON users (password_setup_hash) WHERE password_setup_hash IS NOT NULL;
CREATE INDEX users_organisation_idx ON users (organisation_id, created_at);

-- A session is found by the SHA-256 of the cookie's token. Its mode is the console's test/live
-- switch; second_factor_pending marks a password accepted and a TOTP code still owed.
CREATE TABLE console_sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  mode TEXT NOT NULL DEFAULT 'test' CHECK (mode IN ('test', 'live')),
  second_factor_pending BOOLEAN NOT NULL DEFAULT false,
  ip TEXT,
  created_at TIMESTAMPTZ(3) NOT NULL,
  last_seen_at TIMESTAMPTZ(3) NOT NULL
);
CREATE INDEX console_sessions_user_idx ON console_sessions (user_id);
CREATE INDEX console_sessions_last_seen_idx ON console_sessions (last_seen_at);

-- What people did: who (kept as text, so the record outlives the user), what, on which object,
-- from which address, and when. Appended to only.
CREATE TABLE audit_log (
  id BIGSERIAL PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations (id),
  mode TEXT CHECK (mode IN ('test', 'live')),
  user_id TEXT,
  user_email TEXT NOT NULL,
  action TEXT NOT NULL,
  object_id TEXT,
  detail JSONB NOT NULL DEFAULT '{}',
  ip TEXT,
  created_at TIMESTAMPTZ(3) NOT NULL
);
CREATE INDEX audit_log_organisation_idx ON audit_log (organisation_id, id);
ALTER TABLE audit_log ALTER COLUMN detail SET STATISTICS 0;

-- An organisation may require a second factor of its admins.
ALTER TABLE organisations ADD COLUMN require_admin_totp BOOLEAN NOT NULL DEFAULT false;

-- When a key was last used, to the minute (orders-api writes it at most once a minute per key).
ALTER TABLE api_keys ADD COLUMN last_used_at TIMESTAMPTZ(3);

-- orders-api serves the console: users, sessions and the audit log (append only), the
-- organisation's name and its second-factor setting, and API keys issued and revoked there.
GRANT SELECT, INSERT, UPDATE, DELETE ON users, console_sessions TO pmatch_orders_api;
GRANT SELECT, INSERT ON audit_log TO pmatch_orders_api;
GRANT USAGE ON SEQUENCE audit_log_id_seq TO pmatch_orders_api;
GRANT SELECT (id, name, require_admin_totp) ON organisations TO pmatch_orders_api;
GRANT UPDATE (require_admin_totp) ON organisations TO pmatch_orders_api;
GRANT INSERT ON api_keys TO pmatch_orders_api;
GRANT UPDATE (revoked_at, last_used_at) ON api_keys TO pmatch_orders_api;

-- A test key issued on the console creates the organisation's test account, as ops does; live
-- accounts stay the operator's.
GRANT INSERT ON bank_accounts TO pmatch_orders_api;
CREATE FUNCTION orders_api_bank_account_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.mode = 'test' THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'permission denied: orders-api may only add test bank accounts' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER orders_api_bank_account_check BEFORE INSERT ON bank_accounts
  FOR EACH ROW WHEN (current_user = 'pmatch_orders_api') EXECUTE FUNCTION orders_api_bank_account_check();

-- ops adds the first user of an organisation.
GRANT SELECT, INSERT, UPDATE ON users TO pmatch_ops;

-- An order's timeline on the console: the events about one object, found by data.object.id.
CREATE INDEX events_object_idx ON events ((data #>> '{object,id}'));
