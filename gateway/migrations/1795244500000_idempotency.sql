-- Up Migration

-- The Idempotency-Key store (docs/api.md §1 Idempotency). One row per (account, key): claimed
-- atomically by INSERT … ON CONFLICT before the operation runs, completed with the response
-- to replay, or deleted when the response is not kept (401, 403, 429, 5xx). An in-progress
-- claim holds a lease its gateway renews while the operation runs; a claim whose lease ran out
-- (its gateway died) can be taken over by a retry with the same fingerprint. Rows past
-- expires_at are dead (claims treat them as absent) and purged in the background.
-- Stand-alone on purpose: no reference to other gateway tables.

CREATE TABLE gateway.idempotency_keys (
  account_id text NOT NULL,
  idempotency_key text NOT NULL CHECK (idempotency_key ~ '^[A-Za-z0-9_:.-]{1,255}$'),
  -- SHA-256 of method, versionless path and canonical JSON body; never the body itself.
  fingerprint bytea NOT NULL CHECK (length(fingerprint) = 32),
  state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
  lease_id uuid,
  lease_expires_at timestamptz,
  response_status smallint CHECK (response_status BETWEEN 200 AND 499),
  response_media_type text,
  response_body text,
  -- Allow-listed response headers replayed with the body (Location).
  response_headers jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  completed_at timestamptz,
  PRIMARY KEY (account_id, idempotency_key),
  CHECK (state <> 'in_progress' OR (lease_id IS NOT NULL AND lease_expires_at IS NOT NULL)),
  CHECK (state <> 'completed' OR (response_status IS NOT NULL AND completed_at IS NOT NULL))
);

CREATE INDEX idempotency_keys_expires_idx ON gateway.idempotency_keys (expires_at);

-- Down Migration

DROP TABLE gateway.idempotency_keys;
