-- The matcher asks again, every 15 seconds, for deposits still pending a minute after they were
-- stored (services/matcher, use-cases/redeliver-pending.ts). No index served that read, and it
-- scanned every transaction ever stored; pending deposits are the few just received, so an index
-- of them alone, in seq order, keeps it as cheap with ten million transactions as with ten.
CREATE INDEX transactions_pending_idx ON transactions (seq) WHERE status = 'pending';
