-- Every scrape of the matcher's metrics counts the held and the unmatched deposits
-- (pmatch_deposits_backlog). Unmatched ones are in transactions_waiting_idx; held ones had no index
-- of their own, and counting them read an index of every transaction. Held deposits are the few a
-- person has yet to resolve, so an index of them alone keeps the count cheap.
CREATE INDEX transactions_held_idx ON transactions (seq) WHERE status = 'held';
