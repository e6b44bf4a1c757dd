-- webhook_deliveries_due_idx (next_attempt_at, pending only) dates from before the claim walked
-- the deliveries endpoint by endpoint through webhook_deliveries_endpoint_due_idx, which holds the
-- same rows under (endpoint_id, next_attempt_at, id). The claim no longer reads it, yet every new
-- delivery, every lease and every outcome wrote it. Its one other reader, the poll's skip of
-- deliveries of switched-off endpoints, is planned on webhook_deliveries_endpoint_due_idx or from
-- the switched-off endpoints instead (measured on the benchmark's database).
DROP INDEX webhook_deliveries_due_idx;
