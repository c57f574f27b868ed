-- Up Migration
-- Fan-out remembers each account's active subscriptions (subscription-cache.ts): every change
-- that can alter that list tells the listeners which account to read again, at commit.
CREATE FUNCTION webhook.notify_subscription_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_subscriptions', coalesce(NEW.account_id, OLD.account_id));
  RETURN NULL;
END $$;
CREATE TRIGGER subscriptions_changed
  AFTER INSERT OR DELETE OR UPDATE OF account_id, status, events ON webhook.subscriptions
  FOR EACH ROW EXECUTE FUNCTION webhook.notify_subscription_change();

-- Down Migration
DROP TRIGGER IF EXISTS subscriptions_changed ON webhook.subscriptions;
DROP FUNCTION IF EXISTS webhook.notify_subscription_change();
