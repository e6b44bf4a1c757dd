-- The delivery log (GET /v1/webhook-endpoints/{id}/deliveries) pages one endpoint's attempts,
-- newest first. An attempt knew only its delivery, so a page either walked every endpoint's newer
-- attempts to find this one's, or gathered all of this endpoint's attempts still kept (30 days)
-- and sorted them. Each attempt now carries its delivery's endpoint, indexed with the attempt's
-- id, so a page reads its own rows.
ALTER TABLE webhook_delivery_attempts ADD COLUMN endpoint_id TEXT;

UPDATE webhook_delivery_attempts a SET endpoint_id = d.endpoint_id FROM webhook_deliveries d WHERE d.id = a.delivery_id;
ALTER TABLE webhook_delivery_attempts ALTER COLUMN endpoint_id SET NOT NULL;

-- The endpoint is always the delivery's, whatever the writer gives (dispatchers of earlier
-- versions give none): the database keeps the copy true, for one index probe per attempt.
CREATE FUNCTION webhook_delivery_attempt_endpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT d.endpoint_id INTO NEW.endpoint_id FROM webhook_deliveries d WHERE d.id = NEW.delivery_id;
  -- Said here because NOT NULL is checked before the foreign key; no EXCEPTION block, which
  -- would open a subtransaction for every attempt.
  IF NOT FOUND THEN
    RAISE foreign_key_violation USING MESSAGE = format('webhook delivery %s does not exist', NEW.delivery_id);
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER webhook_delivery_attempt_endpoint BEFORE INSERT OR UPDATE OF delivery_id, endpoint_id ON webhook_delivery_attempts
  FOR EACH ROW EXECUTE FUNCTION webhook_delivery_attempt_endpoint();

CREATE INDEX webhook_delivery_attempts_endpoint_idx ON webhook_delivery_attempts (endpoint_id, id);
