-- Payment links: a merchant's page at which buyers create orders themselves (amount and item
-- fixed by the link, the payer name given by the buyer). docs/decisions/0080-payment-links.md.
-- use_count is raised by one conditional UPDATE per order, in the order's transaction, so the
-- CHECK below is what no race can pass: a link never sells more than use_limit orders.
CREATE TABLE payment_links (
  id TEXT PRIMARY KEY,
  seq BIGSERIAL NOT NULL UNIQUE,
  organisation_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  bank_account_id TEXT NOT NULL,
  amount BIGINT NOT NULL CHECK (amount > 0),
  item_name TEXT NOT NULL,
  metadata JSONB NOT NULL DEFAULT '{}',
  expires_at TIMESTAMPTZ(3),
  use_limit INTEGER CHECK (use_limit > 0),
  use_count INTEGER NOT NULL DEFAULT 0 CHECK (use_count >= 0 AND (use_limit IS NULL OR use_count <= use_limit)),
  token TEXT NOT NULL UNIQUE,
  deactivated_at TIMESTAMPTZ(3),
  created_at TIMESTAMPTZ(3) NOT NULL,
  updated_at TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT payment_links_bank_account_scope_fkey FOREIGN KEY (bank_account_id, organisation_id, mode)
    REFERENCES bank_accounts (id, organisation_id, mode)
);
CREATE INDEX payment_links_list_idx ON payment_links (organisation_id, mode, seq);
ALTER TABLE payment_links ALTER COLUMN metadata SET STATISTICS 0;

-- An order made at a link says so (source payment_link) and names its link. The constraints are
-- added NOT VALID, so that no write to orders waits for a scan; the next migration validates them.
ALTER TABLE orders ADD COLUMN payment_link_id TEXT;
ALTER TABLE orders
  ADD CONSTRAINT orders_payment_link_fkey FOREIGN KEY (payment_link_id) REFERENCES payment_links (id) NOT VALID,
  ADD CONSTRAINT orders_source_known CHECK (source IN ('shop', 'payment_link')) NOT VALID,
  ADD CONSTRAINT orders_payment_link_source CHECK ((payment_link_id IS NOT NULL) = (source IS NOT DISTINCT FROM 'payment_link')) NOT VALID;
ALTER TABLE orders DROP CONSTRAINT orders_source_check;
-- The link's orders, for the foreign key's checks.
CREATE INDEX orders_payment_link_idx ON orders (payment_link_id) WHERE payment_link_id IS NOT NULL;

-- orders-api creates links, raises their count and deactivates them; nothing else changes a link.
GRANT SELECT, INSERT ON payment_links TO pmatch_orders_api;
GRANT UPDATE (use_count, deactivated_at, updated_at) ON payment_links TO pmatch_orders_api;
GRANT USAGE ON SEQUENCE payment_links_seq_seq TO pmatch_orders_api;

-- orders-api may now also create an open order of a payment link, and change or cancel it as it
-- does its own; orders of shop platforms stay the platform's.
CREATE OR REPLACE FUNCTION orders_api_order_write_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.status = 'open' AND NEW.payment IS NULL AND (NEW.source IS NULL OR NEW.source = 'payment_link') THEN
      RETURN NEW;
    END IF;
  ELSIF OLD.source IS DISTINCT FROM 'shop' THEN
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
