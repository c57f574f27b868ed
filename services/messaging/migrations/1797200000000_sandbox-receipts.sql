-- Up Migration
-- The sandbox network's receipts wait in its own rows (carrier/sandbox-receipts.ts), not as a
-- delayed job each: the next receipt's status, when it is due, and the tries it took. A
-- runner takes the due ones in batches; a submit schedules its receipt in the statement that
-- takes the message.
ALTER TABLE messaging.sandbox_network
  ADD COLUMN receipt_status text,
  ADD COLUMN receipt_due_at timestamptz,
  ADD COLUMN receipt_tries integer NOT NULL DEFAULT 0;
CREATE INDEX sandbox_network_receipts_due
  ON messaging.sandbox_network (receipt_due_at) WHERE receipt_due_at IS NOT NULL;

-- Down Migration
DROP INDEX IF EXISTS messaging.sandbox_network_receipts_due;
ALTER TABLE messaging.sandbox_network
  DROP COLUMN IF EXISTS receipt_tries,
  DROP COLUMN IF EXISTS receipt_due_at,
  DROP COLUMN IF EXISTS receipt_status;
