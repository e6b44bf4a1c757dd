-- Initial schema. Invariants live here, not only in code: money is BIGINT whole units, every
-- status is CHECKed, and the unique indexes below are what makes double payment impossible.

CREATE TABLE organisations (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  owner_email TEXT NOT NULL,
  created_at  TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE TABLE bank_accounts (
  id              TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  bank_code       TEXT NOT NULL,
  bank_name       TEXT,
  branch_code     TEXT NOT NULL,
  branch_name     TEXT,
  account_number  TEXT NOT NULL,
  holder_name     TEXT NOT NULL,
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX bank_accounts_organisation_mode_idx ON bank_accounts (organisation_id, mode);
-- The first test key of an organisation creates its one test account; a race of two first keys
-- must not create two.
CREATE UNIQUE INDEX bank_accounts_one_test_account_idx ON bank_accounts (organisation_id) WHERE mode = 'test';

CREATE TABLE api_keys (
  id              TEXT PRIMARY KEY,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  name            TEXT NOT NULL,
  permission      TEXT NOT NULL CHECK (permission IN ('read_write', 'read_only')),
  bank_account_id TEXT REFERENCES bank_accounts(id),
  key_hash        TEXT NOT NULL UNIQUE,
  key_hint        TEXT NOT NULL,
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  revoked_at      TIMESTAMPTZ(3),
  CHECK (mode = 'live' OR bank_account_id IS NULL)
);
CREATE INDEX api_keys_organisation_idx ON api_keys (organisation_id);

CREATE TABLE settings (
  organisation_id          TEXT NOT NULL REFERENCES organisations(id),
  mode                     TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  auto_confirm_late_orders BOOLEAN NOT NULL DEFAULT false,
  matching_rules           TEXT[] NOT NULL DEFAULT '{}',
  updated_at               TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (organisation_id, mode)
);

CREATE TABLE bank_adapters (
  id               TEXT PRIMARY KEY,
  name             TEXT NOT NULL,
  secret_encrypted TEXT NOT NULL,
  created_at       TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  revoked_at       TIMESTAMPTZ(3)
);

CREATE TABLE orders (
  id              TEXT PRIMARY KEY,
  seq             BIGSERIAL NOT NULL UNIQUE,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  bank_account_id TEXT NOT NULL REFERENCES bank_accounts(id),
  status          TEXT NOT NULL CHECK (status IN ('open', 'paid', 'paid_outside', 'canceled', 'expired')),
  amount          BIGINT NOT NULL CHECK (amount > 0),
  payer_name      TEXT NOT NULL,
  external_id     TEXT NOT NULL,
  item_name       TEXT NOT NULL,
  ordered_at      TIMESTAMPTZ(3) NOT NULL,
  expires_at      TIMESTAMPTZ(3) NOT NULL,
  closed_at       TIMESTAMPTZ(3),
  metadata        JSONB NOT NULL DEFAULT '{}',
  source          TEXT CHECK (source IN ('shop')),
  payment_token   TEXT NOT NULL UNIQUE,
  payment         JSONB,
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  updated_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  CHECK ((status IN ('paid', 'paid_outside')) = (payment IS NOT NULL)),
  CHECK ((status = 'open') = (closed_at IS NULL))
);
CREATE UNIQUE INDEX orders_external_id_idx ON orders (organisation_id, mode, external_id);
-- Candidate lookup of the matcher: account, amount, then status.
CREATE INDEX orders_candidates_idx ON orders (bank_account_id, amount, status);
CREATE INDEX orders_list_idx ON orders (organisation_id, mode, seq);
CREATE INDEX orders_open_expiry_idx ON orders (expires_at) WHERE status = 'open';

CREATE TABLE transactions (
  id                  TEXT PRIMARY KEY,
  seq                 BIGSERIAL NOT NULL UNIQUE,
  organisation_id     TEXT NOT NULL REFERENCES organisations(id),
  mode                TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  bank_account_id     TEXT NOT NULL REFERENCES bank_accounts(id),
  bank_reference      TEXT NOT NULL,
  direction           TEXT NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
  status              TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'held', 'unmatched', 'excluded')),
  amount              BIGINT NOT NULL CHECK (amount > 0),
  counterparty        TEXT NOT NULL,
  occurred_at         TIMESTAMPTZ(3) NOT NULL,
  order_id            TEXT REFERENCES orders(id),
  candidate_order_ids TEXT[] NOT NULL DEFAULT '{}',
  decision            JSONB,
  decided_at          TIMESTAMPTZ(3),
  created_at          TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  updated_at          TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  CHECK ((status = 'confirmed') = (order_id IS NOT NULL)),
  CHECK (direction = 'deposit' OR status IN ('unmatched', 'excluded'))
);
CREATE UNIQUE INDEX transactions_bank_reference_idx ON transactions (bank_account_id, bank_reference);
-- One confirmed deposit per order: the database, not the lock, forbids double payment.
CREATE UNIQUE INDEX transactions_one_confirmed_per_order_idx ON transactions (order_id) WHERE status = 'confirmed';
CREATE INDEX transactions_list_idx ON transactions (organisation_id, mode, seq);
CREATE INDEX transactions_unmatched_idx ON transactions (bank_account_id, amount) WHERE status = 'unmatched';

CREATE TABLE events (
  id              TEXT PRIMARY KEY,
  seq             BIGSERIAL NOT NULL UNIQUE,
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  -- The account the event concerns, so keys scoped to one account list only its events.
  bank_account_id TEXT REFERENCES bank_accounts(id),
  type            TEXT NOT NULL,
  data            JSONB NOT NULL,
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX events_list_idx ON events (organisation_id, mode, seq);
CREATE INDEX events_type_idx ON events (organisation_id, mode, type, seq);
CREATE INDEX events_created_at_idx ON events (created_at);

-- Transactional outbox: written in the same DB transaction as the change it announces.
CREATE TABLE outbox (
  id           BIGSERIAL PRIMARY KEY,
  message_id   TEXT NOT NULL UNIQUE,
  exchange     TEXT NOT NULL,
  routing_key  TEXT NOT NULL,
  payload      JSONB NOT NULL,
  headers      JSONB NOT NULL DEFAULT '{}',
  created_at   TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  published_at TIMESTAMPTZ(3)
);
CREATE INDEX outbox_unpublished_idx ON outbox (id) WHERE published_at IS NULL;

-- Idempotent consumers: one row per (consumer, message) written with the effect.
CREATE TABLE inbox (
  consumer     TEXT NOT NULL,
  message_id   TEXT NOT NULL,
  processed_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, message_id)
);

CREATE TABLE idempotency_keys (
  organisation_id TEXT NOT NULL REFERENCES organisations(id),
  mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  key             TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  response_status INTEGER,
  response_body   JSONB,
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (organisation_id, mode, key)
);

CREATE TABLE webhook_endpoints (
  id                        TEXT PRIMARY KEY,
  organisation_id           TEXT NOT NULL REFERENCES organisations(id),
  mode                      TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  url                       TEXT NOT NULL,
  secret_encrypted          TEXT NOT NULL,
  previous_secret_encrypted TEXT,
  previous_secret_expires_at TIMESTAMPTZ(3),
  enabled_events            TEXT[] NOT NULL DEFAULT '{}',
  enabled                   BOOLEAN NOT NULL DEFAULT true,
  disabled_reason           TEXT,
  failing_since             TIMESTAMPTZ(3),
  last_failure_email_at     TIMESTAMPTZ(3),
  created_at                TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  deleted_at                TIMESTAMPTZ(3)
);
CREATE INDEX webhook_endpoints_organisation_mode_idx ON webhook_endpoints (organisation_id, mode);

CREATE TABLE webhook_deliveries (
  id              TEXT PRIMARY KEY,
  endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints(id),
  event_id        TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'skipped')),
  attempt_count   INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TIMESTAMPTZ(3),
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  updated_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX webhook_deliveries_endpoint_event_idx ON webhook_deliveries (endpoint_id, event_id);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE webhook_delivery_attempts (
  id           BIGSERIAL PRIMARY KEY,
  delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt      INTEGER NOT NULL,
  status_code  INTEGER,
  duration_ms  INTEGER NOT NULL,
  error        TEXT,
  attempted_at TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  UNIQUE (delivery_id, attempt)
);
