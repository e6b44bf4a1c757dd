-- Webhook delivery audit fixes: fair claims per endpoint, leases that a resend cannot steal, every
-- replaced signing secret kept for its full overlap, and the delivery log's 30 days kept by the
-- dispatcher that owns it.

-- A claimed delivery is leased: leased_until says so (and fences the claimer's write of the
-- outcome), so a resend can tell an attempt in flight from a delivery waiting for its next retry.
-- A resend that arrives during an attempt sets resend_requested: if that attempt fails, the next
-- one is due at once.
ALTER TABLE webhook_deliveries
  ADD COLUMN leased_until TIMESTAMPTZ(3),
  ADD COLUMN resend_requested BOOLEAN NOT NULL DEFAULT false;

-- The claim takes each endpoint's oldest due deliveries, up to its free slots, endpoint by endpoint.
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';

-- Retention (30 days) of the delivery log: attempts by their time, finished deliveries by their last change.
CREATE INDEX webhook_delivery_attempts_attempted_at_idx ON webhook_delivery_attempts (attempted_at);
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (updated_at) WHERE status <> 'pending';

-- Every replaced secret still inside its 24 hours: [{"secret_encrypted", "expires_at"}], newest
-- first. It supersedes previous_secret_encrypted / previous_secret_expires_at, which held only one,
-- so a second rotation within 24 hours cut the first secret's overlap short. The old columns are
-- emptied here and no longer read or written; a later migration drops them once no release that
-- uses them runs any more.
ALTER TABLE webhook_endpoints
  ADD COLUMN previous_secrets JSONB NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(previous_secrets) = 'array');
UPDATE webhook_endpoints
SET previous_secrets = jsonb_build_array(jsonb_build_object(
      'secret_encrypted', previous_secret_encrypted,
      'expires_at', to_char(previous_secret_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
WHERE previous_secret_encrypted IS NOT NULL AND previous_secret_expires_at > now();
UPDATE webhook_endpoints SET previous_secret_encrypted = NULL, previous_secret_expires_at = NULL
WHERE previous_secret_encrypted IS NOT NULL OR previous_secret_expires_at IS NOT NULL;

-- The dispatcher deletes its delivery log after 30 days (orders-api's retention sweep no longer does).
GRANT DELETE ON webhook_deliveries, webhook_delivery_attempts TO pmatch_webhook_dispatcher;
