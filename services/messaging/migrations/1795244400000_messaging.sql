-- Up Migration

-- Templates: one row per template; its content lives in immutable, signed versions.
CREATE TABLE messaging.templates (
  id text PRIMARY KEY CHECK (id LIKE 'tpl\_%'),
  account_id text NOT NULL,
  name text NOT NULL,
  latest_version integer NOT NULL CHECK (latest_version >= 1),
  idempotency_key text,
  request_sha256 text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, name)
);
CREATE INDEX templates_by_account ON messaging.templates (account_id, id DESC);
CREATE UNIQUE INDEX templates_idempotency_key ON messaging.templates (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- A version never changes once written: content_sha256 and signature cover name, version,
-- channels and body (RFC 8785 canonical JSON); sending re-verifies them against these columns.
CREATE TABLE messaging.template_versions (
  template_id text NOT NULL REFERENCES messaging.templates (id),
  version integer NOT NULL CHECK (version >= 1),
  account_id text NOT NULL,
  name text NOT NULL,
  channels text[] NOT NULL,
  body text NOT NULL,
  variables text[] NOT NULL,
  status text NOT NULL CHECK (status IN ('approved')),
  content_sha256 text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  signature text NOT NULL,
  kid text NOT NULL,
  idempotency_key text,
  request_sha256 text,
  approved_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (template_id, version)
);
CREATE UNIQUE INDEX template_versions_idempotency_key
  ON messaging.template_versions (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE messaging.consents (
  id text PRIMARY KEY CHECK (id LIKE 'cns\_%'),
  account_id text NOT NULL,
  phone_number text NOT NULL CHECK (phone_number ~ '^\+[1-9][0-9]{1,14}$'),
  channels text[] NOT NULL,
  source text NOT NULL CHECK (source IN ('web_form', 'api', 'keyword', 'import', 'verbal')),
  evidence jsonb,
  captured_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('granted', 'revoked')),
  revoked_at timestamptz,
  revocation_source text CHECK (revocation_source IN ('api', 'keyword')),
  revocation_keyword text,
  idempotency_key text,
  request_sha256 text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX consents_by_account ON messaging.consents (account_id, id DESC);
CREATE INDEX consents_by_phone ON messaging.consents (account_id, phone_number, id DESC);
CREATE UNIQUE INDEX consents_idempotency_key ON messaging.consents (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- A recipient who texted STOP (or a synonym) to one of the account's numbers; START/UNSTOP
-- removes the row. Sends to an opted-out recipient are refused whatever consent they name.
CREATE TABLE messaging.opt_outs (
  account_id text NOT NULL,
  phone_number text NOT NULL,
  keyword text NOT NULL,
  -- The channels of the consents the opt-out revoked; START grants them anew.
  revoked_channels text[] NOT NULL,
  opted_out_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, phone_number)
);

CREATE TABLE messaging.account_settings (
  account_id text PRIMARY KEY,
  help_text text,
  stop_reply_text text,
  start_reply_text text,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE messaging.messages (
  id text PRIMARY KEY CHECK (id LIKE 'msg\_%'),
  account_id text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  channel text NOT NULL CHECK (channel IN ('sms', 'mms', 'rcs')),
  channel_used text CHECK (channel_used IN ('sms', 'mms', 'rcs')),
  fallback text CHECK (fallback IN ('sms', 'mms')),
  fallback_applied boolean NOT NULL DEFAULT false,
  status text NOT NULL CHECK (status IN
    ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'expired', 'read', 'received')),
  to_number text NOT NULL,
  from_number text NOT NULL,
  body text NOT NULL,
  media_urls text[] NOT NULL DEFAULT '{}',
  encoding text NOT NULL CHECK (encoding IN ('GSM-7', 'UCS-2')),
  segments integer NOT NULL CHECK (segments >= 1),
  template_id text,
  template_version integer,
  consent_id text,
  expires_at timestamptz,
  error_code text,
  error_message text,
  in_reply_to text,
  keyword text,
  auto_reply_id text,
  -- Delivery: a worker holds the message while it talks to the carrier (lease), counts its
  -- tries, and keeps the carrier's reference once the carrier accepted it.
  lease_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  provider_message_id text,
  -- The message's turn in its sender's pace (booked once, at its first claim).
  scheduled_at timestamptz,
  idempotency_key text,
  request_sha256 text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  delivered_at timestamptz,
  read_at timestamptz
);
CREATE INDEX messages_by_account ON messaging.messages (account_id, id DESC);
CREATE UNIQUE INDEX messages_idempotency_key ON messaging.messages (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX messages_provider_id ON messaging.messages (provider_message_id)
  WHERE provider_message_id IS NOT NULL;
-- The sweeper's work: messages not yet handed to the carrier.
CREATE INDEX messages_unsent ON messaging.messages (created_at) WHERE status IN ('queued', 'sending');

-- Terminal states never change, whatever the statement: the guarded UPDATEs of the service
-- already refuse it, and this trigger makes it hold for any other writer too. `delivered` is
-- terminal except that an RCS message may still be read.
CREATE FUNCTION messaging.guard_message_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status AND (
       OLD.status IN ('undelivered', 'failed', 'expired', 'read', 'received')
       OR (OLD.status = 'delivered'
           AND NOT (NEW.status = 'read' AND OLD.channel_used = 'rcs'))) THEN
    RAISE EXCEPTION 'message % is % and cannot become %', OLD.id, OLD.status, NEW.status
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER messages_terminal_states BEFORE UPDATE OF status ON messaging.messages
  FOR EACH ROW EXECUTE FUNCTION messaging.guard_message_status();

-- Every try to hand a message to the carrier. The row is written before the carrier is called,
-- so a try whose outcome never came back is visible (outcome NULL) to the next one.
CREATE TABLE messaging.send_attempts (
  message_id text NOT NULL REFERENCES messaging.messages (id),
  attempt integer NOT NULL CHECK (attempt >= 1),
  carrier text NOT NULL,
  channel text NOT NULL,
  outcome text CHECK (outcome IN ('accepted', 'rejected', 'error', 'unknown', 'skipped')),
  provider_message_id text,
  error_code text,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (message_id, attempt)
);

-- Per-sender pacing (GCRA): the time the next message of each sending number may go. Each
-- message books its turn once (messages.scheduled_at), so no backlog ever exceeds the pace.
CREATE TABLE messaging.sender_submits (
  sender text PRIMARY KEY,
  tat timestamptz NOT NULL
);

-- The sandbox carrier's simulated network: what it accepted, keyed by the client reference,
-- so a repeated submit of one message is recognised and never sent twice.
CREATE TABLE messaging.sandbox_network (
  client_ref text PRIMARY KEY,
  provider_message_id text NOT NULL UNIQUE,
  channel text NOT NULL,
  to_number text NOT NULL,
  from_number text NOT NULL,
  segments integer NOT NULL,
  submit_calls integer NOT NULL DEFAULT 1,
  accepted_at timestamptz NOT NULL DEFAULT now()
);

-- Kit's signing_keys, outbox: applied by kit's migrate (kitTables, src/migrations.ts), once created here.

-- Down Migration

DROP TABLE IF EXISTS messaging.sandbox_network;
DROP TABLE IF EXISTS messaging.sender_submits;
DROP TABLE IF EXISTS messaging.send_attempts;
DROP TABLE IF EXISTS messaging.messages;
DROP FUNCTION IF EXISTS messaging.guard_message_status();
DROP TABLE IF EXISTS messaging.account_settings;
DROP TABLE IF EXISTS messaging.opt_outs;
DROP TABLE IF EXISTS messaging.consents;
DROP TABLE IF EXISTS messaging.template_versions;
DROP TABLE IF EXISTS messaging.templates;
