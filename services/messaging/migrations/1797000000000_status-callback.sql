-- Up Migration
-- An outbound message's status_callback {url, events}: copied into each of its events' data,
-- where the webhook service's fan-out finds it (docs/api.md "Messages").
ALTER TABLE messaging.messages ADD COLUMN status_callback jsonb;

-- Down Migration
ALTER TABLE messaging.messages DROP COLUMN IF EXISTS status_callback;
