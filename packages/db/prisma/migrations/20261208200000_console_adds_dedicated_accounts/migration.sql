-- An admin adds dedicated transfer accounts (振込専用口座) of their organisation on the console, as
-- the operator does with `ops bank-account add --dedicated` (docs/decisions/0173-console-adds-dedicated-accounts.md).
-- orders-api adds them through insertLiveBankAccounts (packages/db), which names the organisation
-- in the transaction-local setting pmatch.adding_accounts_of; other live accounts stay the
-- operator's. The first test key issued on the console makes the test pool too.
GRANT INSERT ON dedicated_accounts TO pmatch_orders_api;
GRANT USAGE ON SEQUENCE dedicated_accounts_seq_seq TO pmatch_orders_api;

CREATE OR REPLACE FUNCTION orders_api_bank_account_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.mode = 'test' THEN
    RETURN NEW;
  END IF;
  IF NEW.dedicated AND NEW.organisation_id = current_setting('pmatch.adding_accounts_of', true) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'permission denied: orders-api may only add test bank accounts and dedicated ones of the organisation it adds them for'
    USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE FUNCTION orders_api_dedicated_account_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.mode = 'test' OR NEW.organisation_id = current_setting('pmatch.adding_accounts_of', true))
     AND EXISTS (SELECT 1 FROM bank_accounts b WHERE b.id = NEW.bank_account_id AND b.dedicated) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'permission denied: orders-api may only add dedicated accounts of the organisation it adds them for'
    USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER orders_api_dedicated_account_check BEFORE INSERT ON dedicated_accounts
  FOR EACH ROW WHEN (current_user = 'pmatch_orders_api') EXECUTE FUNCTION orders_api_dedicated_account_check();
