-- Up Migration
-- An outbound call's status_callback {url, events}: copied into each of its events' data, where
-- the webhook service's fan-out finds it (docs/api.md "Calls").
ALTER TABLE call_control.calls ADD COLUMN status_callback jsonb;

-- Down Migration
ALTER TABLE call_control.calls DROP COLUMN IF EXISTS status_callback;
