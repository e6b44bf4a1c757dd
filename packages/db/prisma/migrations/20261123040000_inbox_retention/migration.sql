-- Each consuming service forgets its own processed messages after 30 days (platform
-- forgetProcessedMessages): the sweep finds them by consumer and age.
CREATE INDEX inbox_consumer_processed_at_idx ON inbox (consumer, processed_at);

-- The matcher and the webhook dispatcher consume messages and keep inbox rows; each deletes only
-- its own, old ones. orders-api and bank-ingest consume nothing.
GRANT DELETE ON inbox TO pmatch_matcher, pmatch_webhook_dispatcher;
