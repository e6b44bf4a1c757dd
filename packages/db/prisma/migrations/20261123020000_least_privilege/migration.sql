-- Least privilege, second pass: each role may write only what its service owns
-- (docs/ARCHITECTURE.md, "Who writes which table"), down to the columns and transitions, and read
-- only the tables its service reads (found in each service's data code). Tables are named one by
-- one, so tables that later migrations add keep the grants those migrations give them.

-- orders-api: orders only while they are open (create, PATCH, cancel). Paying, expiring and
-- reopening are the matcher's. Column privileges keep it away from payment, source and the
-- order's identity; the trigger below checks the transition, which needs the row before and after
-- the change. Row-level security cannot do that: a policy's WITH CHECK sees only the new row, so
-- it could not tell an expired order being canceled (allowed) from one being reopened (refused),
-- and enabling it on orders would need a policy for every other role as well.
REVOKE UPDATE ON orders FROM pmatch_orders_api;
GRANT UPDATE (amount, payer_name, metadata, status, closed_at, updated_at) ON orders TO pmatch_orders_api;

CREATE FUNCTION orders_api_order_write_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- A new order from the API is open and unpaid; orders from shop platforms come through ops.
    IF NEW.status = 'open' AND NEW.payment IS NULL AND NEW.source IS NULL THEN
      RETURN NEW;
    END IF;
  ELSIF OLD.source IS NULL THEN
    -- PATCH: an open order stays open.
    IF OLD.status = 'open' AND NEW.status = 'open' THEN
      RETURN NEW;
    END IF;
    -- Cancel: from open, or from expired keeping the moment the order left open.
    IF NEW.status = 'canceled' AND (OLD.status = 'open' OR (OLD.status = 'expired' AND NEW.closed_at = OLD.closed_at)) THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION 'permission denied: orders-api may only create open orders, change open ones and cancel open or expired ones (order %: % to %)',
    NEW.id, CASE WHEN TG_OP = 'INSERT' THEN 'new' ELSE OLD.status END, NEW.status
    USING ERRCODE = 'insufficient_privilege';
END $$;

-- Roles are named in the migrations and every service logs in as its own (deploy, start-all).
CREATE TRIGGER orders_api_order_write_check BEFORE INSERT OR UPDATE ON orders
  FOR EACH ROW WHEN (current_user = 'pmatch_orders_api') EXECUTE FUNCTION orders_api_order_write_check();

-- orders-api deletes only what it keeps: events (retention), idempotency keys, published outbox
-- rows. The delivery log is the dispatcher's, so deleting an event no longer cascades into it: an
-- event is deleted once the dispatcher has deleted its deliveries (with their attempts).
REVOKE DELETE ON inbox, webhook_delivery_attempts FROM pmatch_orders_api;
ALTER TABLE webhook_deliveries
  DROP CONSTRAINT webhook_deliveries_event_id_fkey,
  ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id);
-- For the foreign key check when an event is deleted, and retention's "no delivery left" test.
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
GRANT DELETE ON webhook_deliveries, webhook_delivery_attempts TO pmatch_webhook_dispatcher;

-- webhook-dispatcher: on webhook_endpoints only the state of a failing endpoint (switched off,
-- why, since when, last e-mail), never its url or secrets.
REVOKE UPDATE ON webhook_endpoints FROM pmatch_webhook_dispatcher;
GRANT UPDATE (enabled, disabled_reason, failing_since, last_failure_email_at) ON webhook_endpoints TO pmatch_webhook_dispatcher;

-- Reads. API keys (hashes) are read by orders-api and ops only; bank adapters (sealed secrets) by
-- bank-ingest and ops only. Consumers keep SELECT on inbox: INSERT … ON CONFLICT (columns) needs it.
REVOKE SELECT ON organisations, bank_adapters, inbox, webhook_emails FROM pmatch_orders_api;
REVOKE SELECT ON organisations, api_keys, settings, orders, events, inbox, idempotency_keys,
  webhook_endpoints, webhook_deliveries, webhook_delivery_attempts, webhook_emails FROM pmatch_bank_ingest;
REVOKE SELECT ON organisations, bank_accounts, api_keys, bank_adapters, events, idempotency_keys,
  webhook_endpoints, webhook_deliveries, webhook_delivery_attempts, webhook_emails FROM pmatch_matcher;
REVOKE SELECT ON bank_accounts, api_keys, settings, bank_adapters, orders, transactions, outbox,
  idempotency_keys FROM pmatch_webhook_dispatcher;
REVOKE SELECT ON transactions, events, outbox, inbox, idempotency_keys, webhook_endpoints,
  webhook_deliveries, webhook_delivery_attempts, webhook_emails FROM pmatch_ops;
