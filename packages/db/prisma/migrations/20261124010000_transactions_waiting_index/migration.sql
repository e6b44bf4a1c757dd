-- The matcher settles a new order's late-order check without the bank account's lock when no
-- deposit of the order's account and amount is pending or unmatched (services/matcher,
-- use-cases/late-orders.ts, says why pending counts). That read needs both statuses indexed; the
-- readers of unmatched deposits alone use this index as they used the one it replaces.
CREATE INDEX transactions_waiting_idx ON transactions (bank_account_id, amount) WHERE status IN ('pending', 'unmatched');
DROP INDEX transactions_unmatched_idx;
