-- A decision a person asks for in the seller console is written by the matcher: its audit row is
-- written there too, in the decision's transaction (docs/decisions/0100-console-actions-audited-in-their-transaction.md).
GRANT INSERT ON audit_log TO pmatch_matcher;
GRANT USAGE ON SEQUENCE audit_log_id_seq TO pmatch_matcher;
