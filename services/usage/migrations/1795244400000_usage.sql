-- Up Migration

-- The ledger: one signed record per request the gateway answered (api.request) and per billable
-- fact a service emitted. Append-only: the triggers below refuse UPDATE, DELETE and TRUNCATE.
CREATE TABLE usage.records (
  id text PRIMARY KEY CHECK (id ~ '^use_[0-9a-hjkmnp-tv-z]{26}$'),
  kind text NOT NULL CHECK (kind IN ('api.request', 'number.held', 'number.assigned',
    'call.placed', 'call.completed', 'message.sent', 'webhook.delivered', 'smoke.run')),
  occurred_at timestamptz NOT NULL,
  account_id text NOT NULL,
  -- api.request: the gateway's request id, unique (a redelivered record is stored once).
  request_id text,
  -- business facts: the outbox event the record came from, unique.
  event_id text,
  resource_id text,
  -- The signing key; the JWKS publishes it for as long as records name it.
  kid text NOT NULL,
  -- The exact bytes that were signed: the RFC 8785 canonical JSON of the record without
  -- `signature`. Served as stored, so what a client verifies is what was signed.
  payload text NOT NULL,
  -- Compact JWS with detached payload: <header>..<signature> (EdDSA).
  signature text NOT NULL CHECK (signature ~ '^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$'),
  recorded_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'api.request') = (event_id IS NULL)),
  CHECK (kind <> 'api.request' OR request_id IS NOT NULL)
);

CREATE UNIQUE INDEX records_request_id ON usage.records (request_id) WHERE kind = 'api.request';
CREATE UNIQUE INDEX records_event_id ON usage.records (event_id) WHERE event_id IS NOT NULL;

-- Listing: newest first per account, keyset on (occurred_at, id), optionally by kind or resource.
CREATE INDEX records_account_time ON usage.records (account_id, occurred_at DESC, id DESC);
CREATE INDEX records_account_kind_time
  ON usage.records (account_id, kind, occurred_at DESC, id DESC);
CREATE INDEX records_account_resource_time
  ON usage.records (account_id, resource_id, occurred_at DESC, id DESC)
  WHERE resource_id IS NOT NULL;

-- Append-only, enforced by the database whatever the client: no path changes a record.
CREATE FUNCTION usage.refuse_record_change() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'usage.records is append-only: % is not allowed', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER records_no_update_or_delete
  BEFORE UPDATE OR DELETE ON usage.records
  FOR EACH ROW EXECUTE FUNCTION usage.refuse_record_change();

CREATE TRIGGER records_no_truncate
  BEFORE TRUNCATE ON usage.records
  FOR EACH STATEMENT EXECUTE FUNCTION usage.refuse_record_change();

REVOKE UPDATE, DELETE, TRUNCATE ON usage.records FROM PUBLIC;

-- Kit's signing_keys, processed_events: applied by kit's migrate (kitTables, src/migrations.ts), once created here.

-- Down Migration

DROP TABLE IF EXISTS usage.records;
DROP FUNCTION IF EXISTS usage.refuse_record_change();
