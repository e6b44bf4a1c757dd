-- Least privilege: each service connects as its own role, granted only the writes its service
-- owns (docs/ARCHITECTURE.md, "Who writes which table"). A bug or an injection in one service
-- cannot pay an order (only the matcher may), invent a deposit (only bank-ingest may) or mint an
-- API key (only ops).
-- Roles are cluster-wide and may exist already (another database of the same cluster); they get
-- no password here: deployments set one, local trust authentication needs none.
DO $$
DECLARE
  service TEXT;
BEGIN
  FOREACH service IN ARRAY ARRAY['pmatch_orders_api', 'pmatch_bank_ingest', 'pmatch_matcher', 'pmatch_webhook_dispatcher', 'pmatch_ops'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = service) THEN
      EXECUTE format('CREATE ROLE %I LOGIN', service);
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), service);
    EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', service);
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA public TO %I', service);
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO %I', service);
    EXECUTE format('REVOKE ALL ON TABLE "_prisma_migrations" FROM %I', service);
  END LOOP;
END $$;

-- orders-api: orders it creates and edits while open, settings, webhook endpoints, idempotency
-- keys, its events and outbox, and the retention sweep's deletes.
GRANT INSERT, UPDATE ON orders TO pmatch_orders_api;
GRANT INSERT, UPDATE ON settings TO pmatch_orders_api;
GRANT INSERT, UPDATE ON webhook_endpoints TO pmatch_orders_api;
GRANT INSERT, UPDATE, DELETE ON idempotency_keys TO pmatch_orders_api;
GRANT INSERT, DELETE ON events TO pmatch_orders_api;
GRANT INSERT, UPDATE, DELETE ON outbox TO pmatch_orders_api;
GRANT DELETE ON inbox, webhook_delivery_attempts TO pmatch_orders_api;

-- bank-ingest: inserts transactions (never changes one), with their events and outbox rows.
GRANT INSERT ON transactions, events TO pmatch_bank_ingest;
GRANT INSERT, UPDATE ON outbox TO pmatch_bank_ingest;

-- matcher: the only writer of decisions: the status of orders and transactions.
GRANT UPDATE ON orders, transactions TO pmatch_matcher;
GRANT INSERT ON events, inbox TO pmatch_matcher;
GRANT INSERT, UPDATE ON outbox TO pmatch_matcher;

-- webhook-dispatcher: deliveries, their attempts, its e-mails, and switching endpoints off.
GRANT INSERT, UPDATE ON webhook_deliveries TO pmatch_webhook_dispatcher;
GRANT INSERT ON webhook_delivery_attempts, inbox TO pmatch_webhook_dispatcher;
GRANT UPDATE ON webhook_endpoints TO pmatch_webhook_dispatcher;
GRANT INSERT, UPDATE, DELETE ON webhook_emails TO pmatch_webhook_dispatcher;

-- ops CLI: organisations, keys, accounts, settings, adapters, and orders from shop platforms.
GRANT INSERT, UPDATE ON organisations, api_keys, bank_accounts, settings, bank_adapters TO pmatch_ops;
GRANT INSERT ON orders, events, outbox TO pmatch_ops;
