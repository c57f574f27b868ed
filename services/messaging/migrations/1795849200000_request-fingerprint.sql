-- Up Migration
-- One column name for an Idempotency-Key's request fingerprint in every service.
ALTER TABLE messaging.templates RENAME COLUMN request_sha256 TO request_fingerprint;
ALTER TABLE messaging.template_versions RENAME COLUMN request_sha256 TO request_fingerprint;
ALTER TABLE messaging.consents RENAME COLUMN request_sha256 TO request_fingerprint;
ALTER TABLE messaging.messages RENAME COLUMN request_sha256 TO request_fingerprint;
