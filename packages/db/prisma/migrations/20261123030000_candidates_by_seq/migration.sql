-- The matcher reads every open order of an amount and only the most recent expired ones (expired
-- orders are kept for ever): with seq in the index both reads walk it in seq order and stop at
-- their limit instead of fetching and sorting every expired order of the amount.
DROP INDEX orders_candidates_idx;
CREATE INDEX orders_candidates_idx ON orders (bank_account_id, amount, status, seq);
