-- GET /v1/transactions?status= and GET /v1/orders?status= list one status, newest first. They
-- walked the organisation's list index (organisation, mode, seq) and passed over every row of
-- another status, so a page of a rare status (held, unmatched or excluded deposits; canceled or
-- paid_outside orders), which is what a person looks for, read the organisation's whole history.
-- With the status after the organisation and mode, a page reads its own rows.
CREATE INDEX transactions_status_list_idx ON transactions (organisation_id, mode, status, seq);
CREATE INDEX orders_status_list_idx ON orders (organisation_id, mode, status, seq);
