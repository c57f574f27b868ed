-- Up Migration
-- One column name for an Idempotency-Key's request fingerprint in every service.
ALTER TABLE call_control.calls RENAME COLUMN request_hash TO request_fingerprint;
