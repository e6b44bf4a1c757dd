-- A bank adapter may write only to the bank accounts it is bound to. Before this migration any
-- adapter's secret could post a deposit into any merchant's live account (and so pay its orders).
-- Existing adapters get no binding here: each keeps working once an operator binds it to its
-- accounts (`ops adapter bind`); nothing gets access to all accounts by default.
CREATE TABLE bank_adapter_accounts (
  adapter_id      TEXT NOT NULL REFERENCES bank_adapters(id),
  bank_account_id TEXT NOT NULL REFERENCES bank_accounts(id),
  created_at      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (adapter_id, bank_account_id)
);
CREATE INDEX bank_adapter_accounts_bank_account_idx ON bank_adapter_accounts (bank_account_id);

-- Every transaction a bank adapter brings records that adapter (rows stored before this
-- migration, test deposits and operators' imports have none). No foreign key to bank_adapters:
-- every deposit of one adapter would take FOR KEY SHARE on that one row, the multixact contention
-- that 20261124060000_account_scope_keys removed for organisations; adapters are never deleted.
ALTER TABLE transactions ADD COLUMN adapter_id TEXT;

-- bank-ingest reads the bindings of the adapters it verifies; ops writes them.
GRANT SELECT ON bank_adapter_accounts TO pmatch_bank_ingest;
GRANT SELECT, INSERT, DELETE ON bank_adapter_accounts TO pmatch_ops;
