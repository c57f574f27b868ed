-- Up Migration
-- A subscription's deliveries list by creation (created_at, then id), newest or oldest first,
-- optionally within created_after/created_before (deliveries.ts): the listing indexes follow.
DROP INDEX IF EXISTS webhook.deliveries_by_subscription;
DROP INDEX IF EXISTS webhook.deliveries_by_subscription_status;
DROP INDEX IF EXISTS webhook.deliveries_by_resource;
CREATE INDEX deliveries_by_subscription_created
  ON webhook.deliveries (subscription_id, created_at DESC, id DESC);
CREATE INDEX deliveries_by_subscription_status_created
  ON webhook.deliveries (subscription_id, status, created_at DESC, id DESC);
CREATE INDEX deliveries_by_resource_created
  ON webhook.deliveries (subscription_id, resource_id, created_at DESC, id DESC)
  WHERE resource_id IS NOT NULL;

-- Down Migration
DROP INDEX IF EXISTS webhook.deliveries_by_resource_created;
DROP INDEX IF EXISTS webhook.deliveries_by_subscription_status_created;
DROP INDEX IF EXISTS webhook.deliveries_by_subscription_created;
CREATE INDEX deliveries_by_subscription ON webhook.deliveries (subscription_id, id DESC);
CREATE INDEX deliveries_by_subscription_status
  ON webhook.deliveries (subscription_id, status, id DESC);
CREATE INDEX deliveries_by_resource ON webhook.deliveries (subscription_id, resource_id, id DESC)
  WHERE resource_id IS NOT NULL;
