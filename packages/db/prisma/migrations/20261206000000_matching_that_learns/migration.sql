-- Matching that learns (docs/guide.md "Matching rules"): transfer codes on orders, the bank's
-- remitter code and reversal flag on transactions, the index that finds a deposit's twin, and
-- the payers people taught the service.

-- A transfer code: six digits (the first not 0) and a Damm check digit, unique among the open
-- orders of an account (docs/decisions/0094-transfer-codes.md). Orders made before codes have none.
ALTER TABLE orders ADD COLUMN transfer_code TEXT CHECK (transfer_code ~ '^[1-9][0-9]{6}$');
CREATE UNIQUE INDEX orders_open_transfer_code_idx ON orders (bank_account_id, transfer_code) WHERE status = 'open' AND transfer_code IS NOT NULL;
-- Finds the order a deposit's code names, and the codes of orders closed in the last 180 days.
CREATE INDEX orders_transfer_code_idx ON orders (bank_account_id, transfer_code) WHERE transfer_code IS NOT NULL;
-- The first of the codes offered for a new order that no open order of the account holds and no
-- order of it closed in the 180 days before `at` held; NULL when every one is taken.
CREATE FUNCTION first_free_transfer_code(account TEXT, offered TEXT[], at TIMESTAMPTZ) RETURNS TEXT
LANGUAGE sql STABLE AS $$
  SELECT c.code FROM unnest(offered) WITH ORDINALITY AS c(code, k)
  WHERE NOT EXISTS (SELECT FROM orders held WHERE held.bank_account_id = account AND held.transfer_code = c.code
                      AND (held.closed_at IS NULL OR held.closed_at > at - interval '180 days'))
  ORDER BY c.k LIMIT 1
$$;
-- The open orders of an account whose amounts are near a deposit's (its near misses): open orders
-- only, so the range read stays small however many orders an account has closed.
CREATE INDEX orders_open_amount_idx ON orders (bank_account_id, amount) WHERE status = 'open';

-- The bank's 振込依頼人コード (Zengin 01/03, or a notification's remitter_code), digits as sent.
ALTER TABLE transactions ADD COLUMN remitter_code TEXT CHECK (remitter_code ~ '^[0-9]{1,10}$');
-- An entry the bank marked as the reversal of an earlier one (camt RvslInd): a deposit that is one
-- is money coming back, never a buyer's payment.
ALTER TABLE transactions ADD COLUMN bank_reversal BOOLEAN NOT NULL DEFAULT false;
-- A deposit's possible twins: the deposits of its account, Tokyo day and amount
-- (docs/decisions/0095-one-transfer-one-deposit.md). Keyed by the day, so that no other read of
-- transactions finds it a better way than the indexes made for it.
CREATE INDEX transactions_deposits_by_tokyo_day_idx ON transactions (bank_account_id, ((occurred_at AT TIME ZONE 'Asia/Tokyo')::date), amount)
  WHERE direction = 'deposit';

-- Payers people taught the service (名寄せ): the depositor name, as the bank printed it, pays for
-- the payer name on the bank account. Compared by their kana_width forms (the *_key columns).
CREATE TABLE payer_aliases (
  id TEXT PRIMARY KEY,
  seq BIGSERIAL NOT NULL UNIQUE,
  organisation_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  bank_account_id TEXT NOT NULL,
  depositor_name TEXT NOT NULL,
  depositor_key TEXT NOT NULL CHECK (depositor_key <> ''),
  payer_name TEXT NOT NULL,
  payer_key TEXT NOT NULL CHECK (payer_key <> ''),
  created_by TEXT NOT NULL,
  created_at TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT payer_aliases_bank_account_scope_fkey FOREIGN KEY (bank_account_id, organisation_id, mode)
    REFERENCES bank_accounts (id, organisation_id, mode)
);
CREATE UNIQUE INDEX payer_aliases_pair_idx ON payer_aliases (bank_account_id, depositor_key, payer_key);
CREATE INDEX payer_aliases_list_idx ON payer_aliases (organisation_id, mode, seq);

-- The matcher learns a payer when a person matches (and forgets it when a payment it made is
-- reversed); orders-api lists them and deletes them on request.
GRANT SELECT, INSERT, DELETE ON payer_aliases TO pmatch_matcher;
GRANT USAGE ON SEQUENCE payer_aliases_seq_seq TO pmatch_matcher;
GRANT SELECT, DELETE ON payer_aliases TO pmatch_orders_api;
