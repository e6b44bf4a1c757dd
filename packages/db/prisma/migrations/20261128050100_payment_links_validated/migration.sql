-- The constraints the migration before added NOT VALID, validated without blocking writes to orders.
ALTER TABLE orders VALIDATE CONSTRAINT orders_payment_link_fkey;
ALTER TABLE orders VALIDATE CONSTRAINT orders_source_known;
ALTER TABLE orders VALIDATE CONSTRAINT orders_payment_link_source;
