-- An Idempotency-Key is remembered per API key, not per organisation: two keys of one organisation
-- scoped to different bank accounts may send the same key, and neither may be answered with what
-- the other's request stored (docs/decisions/0065-idempotency-keys-per-api-key.md).
--
-- Stored answers do not say which key made them, and they live 24 hours, so they are forgotten
-- here. A retry of such a request is still answered with its order: the order's external_id
-- finds it (200 instead of the replayed 201).
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys ADD COLUMN api_key_id TEXT NOT NULL;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (api_key_id, key);
