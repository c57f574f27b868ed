-- Up Migration

-- Each gateway remembers the clients whose tokens it has checked (active, and in which account)
-- while it LISTENs on this channel; any change of a client row tells every gateway at commit
-- to forget it, so a disable takes effect on every replica within milliseconds
-- (gateway/src/auth/client-status-cache.ts). A gateway that is not listening reads every time.
CREATE FUNCTION gateway.notify_client_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('gateway_client_status', OLD.client_id);
  RETURN NULL;
END;
$$;

CREATE TRIGGER clients_status_notify
  AFTER UPDATE OR DELETE ON gateway.clients
  FOR EACH ROW EXECUTE FUNCTION gateway.notify_client_status();

-- Down Migration
DROP TRIGGER clients_status_notify ON gateway.clients;
DROP FUNCTION gateway.notify_client_status();
