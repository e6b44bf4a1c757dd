-- GET /v1/events must never skip an event. `seq` is drawn when a row is inserted, but transactions
-- commit in any order: a client that paged past seq 11 never sees seq 10 if its transaction
-- commits later. So each event records the transaction that inserted it, and the list shows only
-- events of transactions older than every transaction still running
-- (tx_id < pg_snapshot_xmin(pg_current_snapshot())), ordered by (tx_id, seq). A transaction id
-- below that horizon has committed or rolled back for good, and every id assigned later lies
-- above it, so what the list shows only ever grows at its end. Events of one transaction keep
-- their seq order (transaction.deposited before order.paid).
-- Rows already stored all get this migration's id: they stay in seq order, before every new event.
-- A logical restore (pg_dump) into another cluster restarts transaction ids: set tx_id of the
-- restored rows to '0' there, or new events would sort before them (packages/db/README.md).
ALTER TABLE events ADD COLUMN tx_id xid8 NOT NULL DEFAULT pg_current_xact_id();
DROP INDEX events_list_idx;
DROP INDEX events_type_idx;
CREATE INDEX events_list_idx ON events (organisation_id, mode, tx_id, seq);
CREATE INDEX events_type_idx ON events (organisation_id, mode, type, tx_id, seq);

-- An idempotency key is now written in the DB transaction of the answer it keeps (the order, its
-- events and the stored response commit together), and a request in progress holds the key with a
-- transaction-scoped advisory lock instead of a row: a stored key always has its response.
DELETE FROM idempotency_keys WHERE response_status IS NULL OR response_body IS NULL;
ALTER TABLE idempotency_keys ALTER COLUMN response_status SET NOT NULL, ALTER COLUMN response_body SET NOT NULL;
