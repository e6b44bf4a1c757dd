-- The second step of `…_account_scope_keys`: the existing orders and deposits are checked against
-- their bank accounts (VALIDATE takes a lock that lets rows be written meanwhile). An order or a
-- deposit whose organisation or mode is not its account's fails this migration, which then
-- changes nothing: that row is a fault to look into, not something to migrate past. Once every
-- row is known to agree, the keys to the account alone and to the organisation say nothing more
-- and go.
ALTER TABLE transactions VALIDATE CONSTRAINT transactions_bank_account_scope_fkey;
ALTER TABLE orders VALIDATE CONSTRAINT orders_bank_account_scope_fkey;

ALTER TABLE transactions
  DROP CONSTRAINT transactions_bank_account_id_fkey,
  DROP CONSTRAINT transactions_organisation_id_fkey;

ALTER TABLE orders
  DROP CONSTRAINT orders_bank_account_id_fkey,
  DROP CONSTRAINT orders_organisation_id_fkey;
