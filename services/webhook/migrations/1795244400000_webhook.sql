-- Up Migration

-- Subscriptions: where an account's events go. A deleted subscription is kept (its deliveries
-- reference it) but invisible; `deleted` is terminal.
CREATE TABLE webhook.subscriptions (
  id text PRIMARY KEY CHECK (id LIKE 'whs\_%'),
  account_id text NOT NULL,
  url text NOT NULL CHECK (length(url) <= 2048),
  -- exact event types and patterns (`call.*`, `*`)
  events text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 100),
  description text CHECK (length(description) <= 500),
  status text NOT NULL CHECK (status IN ('active', 'paused', 'disabled', 'deleted')),
  -- why the platform disabled it: the receiver answered 410, or it failed for days
  disabled_reason text CHECK (disabled_reason IN ('gone', 'failing')),
  -- start of the current run of failed attempts (null after any success)
  failing_since timestamptz,
  idempotency_key text,
  request_fingerprint text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  disabled_at timestamptz,
  deleted_at timestamptz,
  CHECK ((status = 'disabled') = (disabled_reason IS NOT NULL)),
  CHECK ((status = 'disabled') = (disabled_at IS NOT NULL)),
  CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
);
-- Listing: the account's visible subscriptions, newest first (ids are ULIDs).
CREATE INDEX subscriptions_by_account ON webhook.subscriptions (account_id, id DESC)
  WHERE status <> 'deleted';
-- Fan-out: the account's active subscriptions.
CREATE INDEX subscriptions_active ON webhook.subscriptions (account_id) WHERE status = 'active';
CREATE UNIQUE INDEX subscriptions_idempotency_key ON webhook.subscriptions (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- Signing secrets, sealed (AES-256-GCM). The current one has no expiry; a rotated-out one
-- signs beside it until expires_at.
CREATE TABLE webhook.subscription_secrets (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id text NOT NULL REFERENCES webhook.subscriptions (id),
  sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz
);
CREATE UNIQUE INDEX subscription_secrets_current ON webhook.subscription_secrets (subscription_id)
  WHERE expires_at IS NULL;
CREATE INDEX subscription_secrets_by_subscription
  ON webhook.subscription_secrets (subscription_id, created_at DESC);

-- One delivery per (subscription, event). `payload` is the exact body sent on every attempt.
-- status: pending → delivered | failed; failed → pending only by an explicit retry (replay).
-- `dispatch` is the generation of the queue job that carries it: a job of an older
-- generation finds the row moved on and does nothing.
CREATE TABLE webhook.deliveries (
  id text PRIMARY KEY CHECK (id LIKE 'wdl\_%'),
  account_id text NOT NULL,
  subscription_id text NOT NULL REFERENCES webhook.subscriptions (id),
  event_id text NOT NULL CHECK (event_id LIKE 'evt\_%'),
  event_type text NOT NULL,
  payload text NOT NULL,
  trace_carrier jsonb,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  dispatch integer NOT NULL DEFAULT 1 CHECK (dispatch > 0),
  -- attempts over the delivery's life, and within the current retry cycle
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  cycle_attempts integer NOT NULL DEFAULT 0 CHECK (cycle_attempts >= 0),
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  delivered_at timestamptz,
  failed_at timestamptz,
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT deliveries_subscription_event_key UNIQUE (subscription_id, event_id),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
  CHECK ((status = 'delivered') = (delivered_at IS NOT NULL)),
  CHECK ((status = 'failed') = (failed_at IS NOT NULL))
);
CREATE INDEX deliveries_by_subscription ON webhook.deliveries (subscription_id, id DESC);
CREATE INDEX deliveries_by_subscription_status ON webhook.deliveries (subscription_id, status, id DESC);
CREATE INDEX deliveries_by_event ON webhook.deliveries (event_id);
-- The redispatch sweeper: pending deliveries whose job should have run by now.
CREATE INDEX deliveries_pending_due ON webhook.deliveries (next_attempt_at)
  WHERE status = 'pending';
CREATE UNIQUE INDEX deliveries_idempotency_key ON webhook.deliveries (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- Every attempt: status code, latency, error class. Never a secret, never a body.
CREATE TABLE webhook.delivery_attempts (
  delivery_id text NOT NULL REFERENCES webhook.deliveries (id),
  attempt integer NOT NULL CHECK (attempt > 0),
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  status_code integer,
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'failed')),
  error text,
  PRIMARY KEY (delivery_id, attempt)
);

-- What the internal sink (the agent smoke's receiver) got; pruned after a day.
CREATE TABLE webhook.sink_receipts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL,
  webhook_id text NOT NULL,
  webhook_timestamp text NOT NULL,
  webhook_signature text NOT NULL,
  body text NOT NULL,
  verified boolean NOT NULL,
  subscription_id text,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sink_receipts_by_account ON webhook.sink_receipts (account_id, id DESC);
CREATE INDEX sink_receipts_received_at ON webhook.sink_receipts (received_at);

-- Kit's outbox, processed_events: applied by kit's migrate (kitTables, src/migrations.ts), once created here.

-- Down Migration

DROP TABLE IF EXISTS webhook.sink_receipts;
DROP TABLE IF EXISTS webhook.delivery_attempts;
DROP TABLE IF EXISTS webhook.deliveries;
DROP TABLE IF EXISTS webhook.subscription_secrets;
DROP TABLE IF EXISTS webhook.subscriptions;
