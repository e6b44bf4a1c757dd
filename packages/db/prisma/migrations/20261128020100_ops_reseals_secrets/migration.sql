-- `ops secrets reseal` seals every stored secret again under the newest SECRETS_KEY (key rotation,
-- and secrets sealed before they were bound to their row). The operator's role already reads and
-- writes bank adapters and users; of webhook endpoints it may read and rewrite the sealed columns
-- and the id that finds them, nothing else (a URL or the endpoint's owner stays out of its reach).
GRANT SELECT (id, secret_encrypted, previous_secrets), UPDATE (secret_encrypted, previous_secrets) ON webhook_endpoints TO pmatch_ops;
