-- Up Migration
-- Status callbacks (status-callbacks.ts): each account has at most one hidden subscription of
-- purpose `status_callback` that holds its status-callback secret and owns the deliveries to
-- the calls' and messages' own URLs (`target_url`), which are its delivery log. It is never
-- listed, counted, matched by the fan-out's patterns or disabled.
ALTER TABLE webhook.subscriptions
  ADD COLUMN purpose text NOT NULL DEFAULT 'subscription'
    CHECK (purpose IN ('subscription', 'status_callback'));
CREATE UNIQUE INDEX subscriptions_status_callback ON webhook.subscriptions (account_id)
  WHERE purpose = 'status_callback';
ALTER TABLE webhook.deliveries
  ADD COLUMN target_url text CHECK (length(target_url) <= 2048),
  ADD COLUMN resource_id text;
-- A call's or message's own delivery log (GET …/deliveries?resource_id=).
CREATE INDEX deliveries_by_resource ON webhook.deliveries (subscription_id, resource_id, id DESC)
  WHERE resource_id IS NOT NULL;

-- Down Migration
DROP INDEX IF EXISTS webhook.deliveries_by_resource;
ALTER TABLE webhook.deliveries DROP COLUMN IF EXISTS resource_id, DROP COLUMN IF EXISTS target_url;
DROP INDEX IF EXISTS webhook.subscriptions_status_callback;
ALTER TABLE webhook.subscriptions DROP COLUMN IF EXISTS purpose;
