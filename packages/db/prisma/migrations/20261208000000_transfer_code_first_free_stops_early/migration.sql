-- The code a new order gets: the first of those offered that no open order of the account holds
-- and no order of it closed in the 180 days before `at` held; NULL when every one is taken
-- (docs/decisions/0094-transfer-codes.md). The first free one is nearly always the first offered:
-- the loop stops there, where the set-based form it replaces looked up all eight before sorting
-- them (docs/decisions/0101-per-request-middleware-costs.md).
CREATE OR REPLACE FUNCTION first_free_transfer_code(account TEXT, offered TEXT[], at TIMESTAMPTZ) RETURNS TEXT
LANGUAGE plpgsql STABLE AS $$
DECLARE
  code TEXT;
BEGIN
  FOREACH code IN ARRAY offered LOOP
    IF NOT EXISTS (SELECT FROM orders held WHERE held.bank_account_id = account AND held.transfer_code = code
                     AND (held.closed_at IS NULL OR held.closed_at > at - interval '180 days')) THEN
      RETURN code;
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
