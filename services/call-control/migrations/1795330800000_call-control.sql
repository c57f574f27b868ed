-- Up Migration

-- Seats: where calls are handled; max_concurrent_calls is enforced with the active_calls
-- counter, claimed and released under the seat's row lock in the transaction that starts or
-- ends a call (so it cannot drift and cannot be overrun by concurrent requests).
CREATE TABLE call_control.seats (
  id text PRIMARY KEY CHECK (id LIKE 'seat\_%'),
  account_id text NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 128),
  max_concurrent_calls integer NOT NULL DEFAULT 1 CHECK (max_concurrent_calls BETWEEN 1 AND 10000),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  active_calls integer NOT NULL DEFAULT 0 CHECK (active_calls >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX seats_by_account ON call_control.seats (account_id, id DESC);

CREATE TABLE call_control.agents (
  id text PRIMARY KEY CHECK (id LIKE 'agt\_%'),
  account_id text NOT NULL,
  name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  description text CHECK (char_length(description) <= 1024),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT agents_account_name_key UNIQUE (account_id, name)
);
CREATE INDEX agents_by_account ON call_control.agents (account_id, id DESC);

-- Routes: inbound calls to a route's numbers ring under the route (its agent, its seat).
-- The agent and the seat cannot be deleted while a route refers to them (RESTRICT).
CREATE TABLE call_control.routes (
  id text PRIMARY KEY CHECK (id LIKE 'rte\_%'),
  account_id text NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 128),
  agent_id text NOT NULL REFERENCES call_control.agents (id) ON DELETE RESTRICT,
  seat_id text REFERENCES call_control.seats (id) ON DELETE RESTRICT,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX routes_by_account ON call_control.routes (account_id, id DESC);
CREATE INDEX routes_by_agent ON call_control.routes (agent_id);
CREATE INDEX routes_by_seat ON call_control.routes (seat_id) WHERE seat_id IS NOT NULL;

-- A number belongs to at most one route of its account (the primary key says so).
CREATE TABLE call_control.route_numbers (
  account_id text NOT NULL,
  e164 text NOT NULL CHECK (e164 ~ '^\+[1-9][0-9]{1,14}$'),
  route_id text NOT NULL REFERENCES call_control.routes (id) ON DELETE CASCADE,
  position smallint NOT NULL CHECK (position >= 0),
  PRIMARY KEY (account_id, e164)
);
CREATE INDEX route_numbers_by_route ON call_control.route_numbers (route_id, position);

CREATE TABLE call_control.calls (
  id text PRIMARY KEY CHECK (id LIKE 'call\_%'),
  account_id text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  status text NOT NULL CHECK (status IN ('queued', 'initiated', 'ringing', 'in_progress',
    'completed', 'busy', 'no_answer', 'failed', 'canceled', 'rejected')),
  to_number text NOT NULL,
  from_number text NOT NULL,
  -- the agent's name when the call was placed or answered (a snapshot; agents may be renamed)
  agent text,
  seat_id text,
  -- true while (and after) the call counted against its seat's active_calls
  seat_claimed boolean NOT NULL DEFAULT false,
  route_id text,
  attestation text CHECK (attestation IN ('A', 'B', 'C')),
  identity text,
  client_state text CHECK (octet_length(client_state) <= 1024),
  timeout_seconds integer NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 3600),
  time_limit_seconds integer NOT NULL CHECK (time_limit_seconds BETWEEN 1 AND 14400),
  hangup_cause text CHECK (hangup_cause IN ('normal_clearing', 'user_busy', 'no_answer',
    'timeout', 'time_limit', 'originator_cancel', 'call_rejected', 'no_route', 'network_error')),
  hangup_source text CHECK (hangup_source IN ('caller', 'callee', 'platform')),
  sip_code smallint CHECK (sip_code BETWEEN 100 AND 699),
  idempotency_key text,
  -- SHA-256 of the request's canonical form: the same key with another request is a mismatch
  request_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  initiated_at timestamptz,
  ringing_at timestamptz,
  answered_at timestamptz,
  ended_at timestamptz,
  CHECK ((status IN ('completed', 'busy', 'no_answer', 'failed', 'canceled', 'rejected'))
    = (ended_at IS NOT NULL)),
  CHECK ((ended_at IS NULL) = (hangup_cause IS NULL)),
  CHECK (NOT seat_claimed OR seat_id IS NOT NULL),
  CHECK (status <> 'completed' OR answered_at IS NOT NULL),
  CHECK (direction = 'inbound' OR identity IS NOT NULL)
);
-- One Idempotency-Key → one call, per account (keys older than 24 h are released on reuse).
CREATE UNIQUE INDEX calls_idempotency_key ON call_control.calls (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX calls_by_account ON call_control.calls (account_id, id DESC);
CREATE INDEX calls_by_account_status ON call_control.calls (account_id, status, id DESC);
CREATE INDEX calls_by_account_direction ON call_control.calls (account_id, direction, id DESC);
CREATE INDEX calls_live ON call_control.calls (id)
  WHERE status IN ('queued', 'initiated', 'ringing', 'in_progress');

-- Durable timers: the platform's (dial, timeout, time limit) and the sandbox network's
-- (ringing, answer, hangup). Claimed with FOR UPDATE SKIP LOCKED and a lease by every replica,
-- so a timer outlives the process that set it (an expired lease is claimed again).
CREATE TABLE call_control.scheduled_actions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  call_id text NOT NULL,
  kind text NOT NULL CHECK (kind ~ '^[a-z]+\.[a-z_]+$'),
  payload jsonb NOT NULL DEFAULT '{}',
  due_at timestamptz NOT NULL,
  locked_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scheduled_actions_due ON call_control.scheduled_actions (due_at, id);
CREATE INDEX scheduled_actions_by_call ON call_control.scheduled_actions (call_id);

-- The sandbox network's record of every INVITE it received (one row per call; `dials` counts
-- repeats), with the Identity header (PASSporT) it was handed.
CREATE TABLE call_control.sandbox_dials (
  call_id text PRIMARY KEY,
  to_number text NOT NULL,
  from_number text NOT NULL,
  identity text NOT NULL,
  identity_info text NOT NULL,
  dials integer NOT NULL DEFAULT 1 CHECK (dials >= 1),
  first_dialed_at timestamptz NOT NULL DEFAULT now(),
  last_dialed_at timestamptz NOT NULL DEFAULT now()
);

-- The self-signed STIR/SHAKEN certificate of each PASSporT signing key.
CREATE TABLE call_control.stir_certificates (
  kid text PRIMARY KEY,
  certificate_pem text NOT NULL,
  not_before timestamptz NOT NULL,
  not_after timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Kit's signing_keys, outbox: applied by kit's migrate (kitTables, src/migrations.ts), once created here.

-- Down Migration

DROP TABLE IF EXISTS call_control.stir_certificates;
DROP TABLE IF EXISTS call_control.sandbox_dials;
DROP TABLE IF EXISTS call_control.scheduled_actions;
DROP TABLE IF EXISTS call_control.calls;
DROP TABLE IF EXISTS call_control.route_numbers;
DROP TABLE IF EXISTS call_control.routes;
DROP TABLE IF EXISTS call_control.agents;
DROP TABLE IF EXISTS call_control.seats;
