-- Dedicated transfer accounts (振込専用口座, docs/guide.md "Dedicated transfer accounts"): account
-- numbers a seller's bank issues in bulk, all landing in one real account. Each is a bank account
-- like the others (adapters bind to it, statements name it), marked dedicated, with a row in
-- dedicated_accounts that says whom it is given to (docs/decisions/0170-dedicated-transfer-accounts.md).
ALTER TABLE bank_accounts ADD COLUMN dedicated BOOLEAN NOT NULL DEFAULT false;

-- An organisation's one plain test account; its dedicated test accounts are a pool beside it.
DROP INDEX bank_accounts_one_test_account_idx;
CREATE UNIQUE INDEX bank_accounts_one_test_account_idx ON bank_accounts (organisation_id) WHERE mode = 'test' AND NOT dedicated;

-- Whom a dedicated account is given to: one order at a time (期限型: order_id, the last order it
-- was given to; free again once that order has been closed for the rest period), or one buyer for
-- good (継続型: customer_reference, the seller's name for the buyer; order_id their first order).
CREATE TABLE dedicated_accounts (
  bank_account_id TEXT PRIMARY KEY,
  seq BIGSERIAL NOT NULL UNIQUE,
  organisation_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  customer_reference TEXT CHECK (length(customer_reference) BETWEEN 1 AND 100),
  order_id TEXT,
  given_at TIMESTAMPTZ(3),
  CHECK ((order_id IS NULL) = (given_at IS NULL)),
  CHECK (customer_reference IS NULL OR order_id IS NOT NULL),
  CONSTRAINT dedicated_accounts_bank_account_scope_fkey FOREIGN KEY (bank_account_id, organisation_id, mode)
    REFERENCES bank_accounts (id, organisation_id, mode)
);
-- A buyer has one account per organisation and mode.
CREATE UNIQUE INDEX dedicated_accounts_customer_idx ON dedicated_accounts (organisation_id, mode, customer_reference) WHERE customer_reference IS NOT NULL;
-- Free accounts are looked for among those given to no buyer: never given first, then the longest rested.
CREATE INDEX dedicated_accounts_pool_idx ON dedicated_accounts (organisation_id, mode, given_at NULLS FIRST, seq) WHERE customer_reference IS NULL;

-- Orders on a dedicated account: `dedicated` marks them; `customer_reference` names the buyer of
-- an account given for good. An account given per order holds one open order at a time, whoever
-- wrote it (the row lock of dedicated_accounts decides who gets it; this refuses a second).
ALTER TABLE orders ADD COLUMN dedicated BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE orders ADD COLUMN customer_reference TEXT CHECK (length(customer_reference) BETWEEN 1 AND 100);
ALTER TABLE orders ADD CONSTRAINT orders_customer_reference_dedicated CHECK (customer_reference IS NULL OR dedicated);
CREATE UNIQUE INDEX orders_dedicated_open_idx ON orders (bank_account_id) WHERE dedicated AND customer_reference IS NULL AND status = 'open';
-- The orders of an account, for the matcher's read of a dedicated account's last order.
CREATE INDEX orders_dedicated_account_idx ON orders (bank_account_id, seq) WHERE dedicated;

-- Where the buyer pays: the order's account as the payment page prints it (bank, branch, type,
-- number, holder), written with the order by the trigger below whatever the writer gives, and
-- never changed. Orders stored before it get their account's details now.
ALTER TABLE orders ADD COLUMN transfer_to JSONB;
CREATE FUNCTION bank_account_transfer_to(account TEXT) RETURNS JSONB
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('bank_code', b.bank_code, 'bank_name', b.bank_name, 'branch_code', b.branch_code,
                            'branch_name', b.branch_name, 'account_type', b.account_type,
                            'account_number', b.account_number, 'holder_name', b.holder_name)
  FROM bank_accounts b WHERE b.id = account
$$;
CREATE FUNCTION orders_transfer_to() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.transfer_to := bank_account_transfer_to(NEW.bank_account_id);
  RETURN NEW;
END $$;
CREATE TRIGGER orders_transfer_to BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION orders_transfer_to();
UPDATE orders SET transfer_to = bank_account_transfer_to(bank_account_id);
ALTER TABLE orders ALTER COLUMN transfer_to SET NOT NULL;

-- ops adds dedicated accounts (with their bank accounts); orders-api gives them out; the matcher
-- reads whom each was given to.
GRANT SELECT, INSERT ON dedicated_accounts TO pmatch_ops;
GRANT USAGE ON SEQUENCE dedicated_accounts_seq_seq TO pmatch_ops;
GRANT SELECT, UPDATE (customer_reference, order_id, given_at) ON dedicated_accounts TO pmatch_orders_api;
GRANT SELECT ON dedicated_accounts TO pmatch_matcher;
