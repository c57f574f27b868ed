-- Up Migration
-- The smpp carrier (docs/api.md "Carriers").

-- A message the SMSC took in several parts has one network id per part: the first is the
-- message's provider_message_id, the others are kept here so their receipts are recognised.
CREATE TABLE messaging.message_parts (
  provider_part_id text PRIMARY KEY,
  message_id text NOT NULL REFERENCES messaging.messages (id) ON DELETE CASCADE,
  part integer NOT NULL CHECK (part >= 2)
);
CREATE INDEX message_parts_message ON messaging.message_parts (message_id);

-- Parts of a concatenated inbound message that arrived before the rest (in any order, on any
-- replica's bind), keyed as the sender numbered them. The last part to arrive assembles the
-- message and deletes its parts in the same transaction.
CREATE TABLE messaging.inbound_parts (
  from_number text NOT NULL,
  to_number text NOT NULL,
  reference integer NOT NULL,
  total integer NOT NULL CHECK (total BETWEEN 2 AND 255),
  sequence integer NOT NULL CHECK (sequence BETWEEN 1 AND total),
  body text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (from_number, to_number, reference, total, sequence)
);
CREATE INDEX inbound_parts_age ON messaging.inbound_parts (received_at);

-- Down Migration
DROP TABLE IF EXISTS messaging.inbound_parts;
DROP TABLE IF EXISTS messaging.message_parts;
