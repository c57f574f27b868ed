-- Up Migration
-- Every deliverable event the fan-out takes (events.ts), kept for WEBHOOK_EVENT_RETENTION so
-- GET /api/events can list and re-fetch them; `payload` is the delivered body, byte for byte.
CREATE TABLE webhook.events (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  type text NOT NULL,
  occurred_at timestamptz NOT NULL,
  payload text NOT NULL
);
CREATE INDEX events_account_id ON webhook.events (account_id, id DESC);
CREATE INDEX events_account_type_id ON webhook.events (account_id, type, id DESC);
CREATE INDEX events_occurred_at ON webhook.events (occurred_at);

-- Down Migration
DROP TABLE IF EXISTS webhook.events;
