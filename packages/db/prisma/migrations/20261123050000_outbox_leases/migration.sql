-- The outbox relay claims a batch with a lease instead of holding a transaction open while it
-- publishes: a transaction that locks rows has an id, and an open one holds back the horizon below
-- which GET /v1/events lists events. A relay that dies leaves its lease to run out; a row whose lease
-- has passed is claimed again (consumers dedupe by message id). The relaying roles' UPDATE on
-- outbox is table-wide, so it covers the new column.
ALTER TABLE outbox ADD COLUMN leased_until TIMESTAMPTZ(3);
