-- The test events sent to an endpoint from its settings, and how each went: shown in the
-- endpoint's delivery log on the console. A test event is never an event of the events table
-- (never recorded, never listed), so its sends have their own rows; the latest 20 per endpoint
-- are kept, the dispatcher removing older ones as it adds one.
CREATE TABLE webhook_test_sends (
  id          BIGSERIAL PRIMARY KEY,
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id    TEXT NOT NULL,
  status_code INTEGER,
  duration_ms INTEGER NOT NULL,
  error       TEXT,
  sent_at     TIMESTAMPTZ(3) NOT NULL
);
CREATE INDEX webhook_test_sends_endpoint_idx ON webhook_test_sends (endpoint_id, id);

GRANT SELECT ON webhook_test_sends TO pmatch_orders_api, pmatch_ops, pmatch_matcher, pmatch_bank_ingest;
GRANT SELECT, INSERT, DELETE ON webhook_test_sends TO pmatch_webhook_dispatcher;
GRANT USAGE ON SEQUENCE webhook_test_sends_id_seq TO pmatch_webhook_dispatcher;
