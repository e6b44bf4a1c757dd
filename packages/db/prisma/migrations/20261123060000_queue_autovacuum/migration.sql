-- The outbox and the webhook deliveries are queues: a row is written, claimed and finished within
-- seconds, and each finished row leaves dead entries at the front of the partial index its claim
-- walks (outbox_unpublished_idx, webhook_deliveries_endpoint_due_idx) until a vacuum removes them.
-- PostgreSQL's default waits until a fifth of the table is dead, so a table of a million rows
-- collects 200,000 of them between vacuums, and every claim steps over them: measured on the
-- benchmark, the deliveries' claim took 20 ms with 40,000 dead rows and 10 ms after a VACUUM, and
-- webhooks went from 45 to over 500 per second. These tables are vacuumed after a fixed number of
-- dead rows, whatever their size. (Autovacuum itself must be on: docs/CONFIGURATION.md.)
ALTER TABLE outbox SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);
ALTER TABLE webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000);
