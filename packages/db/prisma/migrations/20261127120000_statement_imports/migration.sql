-- Bank statements (Zengin 01/03, camt.053/054) imported whole: one row per import, and for every
-- transaction an import stored, the bank's raw record it came from. The transactions themselves
-- are stored exactly as notifications are (one table, one de-duplication by bank reference).
CREATE TABLE statement_imports (
  id          TEXT PRIMARY KEY,
  -- The adapter that signed the upload; none when an operator imported the file (ops).
  adapter_id  TEXT REFERENCES bank_adapters(id),
  format      TEXT NOT NULL,
  file_sha256 TEXT NOT NULL,
  file_bytes  BIGINT NOT NULL CHECK (file_bytes >= 0),
  accounts    INT NOT NULL CHECK (accounts >= 0),
  records     INT NOT NULL CHECK (records >= 0),
  -- Counted as the records are stored; final once status is 'stored'.
  stored      INT NOT NULL DEFAULT 0 CHECK (stored >= 0),
  duplicates  INT NOT NULL DEFAULT 0 CHECK (duplicates >= 0),
  withdrawals INT NOT NULL DEFAULT 0 CHECK (withdrawals >= 0),
  status      TEXT NOT NULL CHECK (status IN ('storing', 'stored')),
  created_at  TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ(3),
  CHECK ((status = 'stored') = (finished_at IS NOT NULL))
);
CREATE INDEX statement_imports_created_at_idx ON statement_imports (created_at);

-- The import that first stored a transaction. One import's batches run one after another, so this
-- key never has many writers waiting on one row.
ALTER TABLE transactions ADD COLUMN statement_import_id TEXT REFERENCES statement_imports(id);

CREATE TABLE statement_records (
  transaction_id         TEXT PRIMARY KEY REFERENCES transactions(id),
  statement_import_id    TEXT NOT NULL REFERENCES statement_imports(id),
  -- The record's number in its file (Zengin), or the line its entry starts on (camt).
  line                   INT NOT NULL CHECK (line > 0),
  raw                    BYTEA NOT NULL,
  -- A cancellation (取消区分, a reversal) is a withdrawal; this is the deposit it names, when the
  -- import could tell which. It never changes that deposit or its payment.
  cancels_transaction_id TEXT REFERENCES transactions(id)
);
CREATE INDEX statement_records_import_idx ON statement_records (statement_import_id);

GRANT SELECT, INSERT, UPDATE ON statement_imports TO pmatch_bank_ingest;
GRANT INSERT ON statement_records TO pmatch_bank_ingest;

-- `ops statement import` runs bank-ingest's own checks and storing code as the operator: it
-- inserts transactions, reads back the ones already stored, and records the import.
GRANT SELECT, INSERT ON transactions TO pmatch_ops;
GRANT SELECT, INSERT, UPDATE ON statement_imports TO pmatch_ops;
GRANT INSERT ON statement_records TO pmatch_ops;
