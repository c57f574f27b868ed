-- Up Migration

-- Call-control remembers which account owns a number, and the number's seat (a call's caller
-- id and its attestation depend on both), only while inventory tells it of every change: each
-- inventory process LISTENs on this channel and streams what it hears to its watchers
-- (WatchNumberOwners, services/inventory/src/number-owner-watch.ts). A change of a number's
-- owner or seat notifies its E.164 at commit. Numbers come in unassigned (the seed), so an
-- insert notifies only when it already names an owner.
CREATE FUNCTION inventory.notify_number_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('inventory_number_owner', COALESCE(OLD.e164, NEW.e164));
  RETURN NULL;
END;
$$;

CREATE TRIGGER numbers_owner_changed
  AFTER UPDATE OF assigned_account, seat_id ON inventory.numbers
  FOR EACH ROW
  WHEN (OLD.assigned_account IS DISTINCT FROM NEW.assigned_account
        OR OLD.seat_id IS DISTINCT FROM NEW.seat_id)
  EXECUTE FUNCTION inventory.notify_number_owner();

CREATE TRIGGER numbers_owner_inserted
  AFTER INSERT ON inventory.numbers
  FOR EACH ROW WHEN (NEW.assigned_account IS NOT NULL)
  EXECUTE FUNCTION inventory.notify_number_owner();

CREATE TRIGGER numbers_owner_deleted
  AFTER DELETE ON inventory.numbers
  FOR EACH ROW EXECUTE FUNCTION inventory.notify_number_owner();

-- Down Migration
DROP TRIGGER numbers_owner_deleted ON inventory.numbers;
DROP TRIGGER numbers_owner_inserted ON inventory.numbers;
DROP TRIGGER numbers_owner_changed ON inventory.numbers;
DROP FUNCTION inventory.notify_number_owner();
