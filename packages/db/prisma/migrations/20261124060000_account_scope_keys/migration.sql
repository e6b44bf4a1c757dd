-- A deposit and an order belong to their bank account's organisation and mode: test and live never
-- mix, and the database now says so, not only the services. Each takes one foreign key to its
-- bank account's (id, organisation_id, mode) in place of two, to the account and to the
-- organisation: the organisation is the account's, whose own key to organisations stands.
--
-- One key also means one check per row written instead of two. Each check takes FOR KEY SHARE on
-- the row it finds, so every deposit and order of a merchant being written at the same moment
-- locked the merchant's one organisation row: with several holders, each new one rewrites the
-- row's lock as a multixact of them all (auto_explain in the bench: the organisation check the
-- slowest step of a loaded deposit insert). A bank account's row is shared by its own traffic only.
--
-- In two steps, so that deposits and orders are never refused or held up while the existing rows
-- are checked: here the keys are added NOT VALID (checked for every row written from now on, no
-- scan, the tables' lock held only for the change itself); the next migration checks the existing
-- rows, which blocks no writes, and only then drops the two keys each replaces.
ALTER TABLE bank_accounts ADD CONSTRAINT bank_accounts_scope_key UNIQUE (id, organisation_id, mode);

ALTER TABLE transactions ADD CONSTRAINT transactions_bank_account_scope_fkey
  FOREIGN KEY (bank_account_id, organisation_id, mode) REFERENCES bank_accounts (id, organisation_id, mode) NOT VALID;

ALTER TABLE orders ADD CONSTRAINT orders_bank_account_scope_fkey
  FOREIGN KEY (bank_account_id, organisation_id, mode) REFERENCES bank_accounts (id, organisation_id, mode) NOT VALID;
