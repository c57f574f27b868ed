-- Up Migration

-- The Idempotency-Key a create ran under, with its request's fingerprint (kit's idempotency.ts):
-- a create retried after the gateway lost its answer (a deadline, a replica killed, the
-- database back after a pause) finds the resource it made instead of making another one or
-- meeting its own name (409). Calls keep theirs since the first migration.
ALTER TABLE call_control.agents
  ADD COLUMN idempotency_key text,
  ADD COLUMN request_fingerprint text;
CREATE UNIQUE INDEX agents_idempotency_key ON call_control.agents (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

ALTER TABLE call_control.seats
  ADD COLUMN idempotency_key text,
  ADD COLUMN request_fingerprint text;
CREATE UNIQUE INDEX seats_idempotency_key ON call_control.seats (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

ALTER TABLE call_control.routes
  ADD COLUMN idempotency_key text,
  ADD COLUMN request_fingerprint text;
CREATE UNIQUE INDEX routes_idempotency_key ON call_control.routes (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- Down Migration

DROP INDEX call_control.routes_idempotency_key;
ALTER TABLE call_control.routes DROP COLUMN idempotency_key, DROP COLUMN request_fingerprint;
DROP INDEX call_control.seats_idempotency_key;
ALTER TABLE call_control.seats DROP COLUMN idempotency_key, DROP COLUMN request_fingerprint;
DROP INDEX call_control.agents_idempotency_key;
ALTER TABLE call_control.agents DROP COLUMN idempotency_key, DROP COLUMN request_fingerprint;
