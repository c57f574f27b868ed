-- Up Migration

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The countries the inventory serves; (iso, calling_code) pins every number's E.164 prefix.
CREATE TABLE inventory.countries (
  iso text PRIMARY KEY CHECK (iso ~ '^[A-Z]{2}$'),
  calling_code text NOT NULL CHECK (calling_code ~ '^[1-9][0-9]{0,2}$'),
  UNIQUE (iso, calling_code)
);
INSERT INTO inventory.countries (iso, calling_code) VALUES ('US', '1'), ('CA', '1'), ('GB', '44');

CREATE TABLE inventory.numbers (
  id text PRIMARY KEY,
  e164 text COLLATE "C" NOT NULL,
  calling_code text NOT NULL,
  -- national significant number: e164 without '+' and the calling code
  national text COLLATE "C" NOT NULL CHECK (national ~ '^[0-9]{4,14}$'),
  country text NOT NULL,
  region text,
  locality text,
  area_code text NOT NULL CHECK (area_code ~ '^[0-9]{1,5}$'),
  type text NOT NULL CHECK (type IN ('local', 'toll_free', 'mobile')),
  -- bitmask: 1 voice, 2 sms, 4 mms, 8 rcs
  capabilities smallint NOT NULL CHECK (capabilities BETWEEN 0 AND 15),
  -- precomputed runs: longest run of identical digits, and the longest run of each digit 0-9
  max_run smallint NOT NULL CHECK (max_run BETWEEN 1 AND 15),
  digit_runs smallint[] NOT NULL CHECK (cardinality(digit_runs) = 10),
  assigned_account text,
  seat_id text,
  assigned_at timestamptz,
  -- the current hold; it lapses by itself once held_until has passed
  hold_id text,
  held_by text,
  held_until timestamptz,
  -- per-number event sequence of the outbox (bumped under the row lock)
  event_sequence integer NOT NULL DEFAULT 0 CHECK (event_sequence >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (country, calling_code) REFERENCES inventory.countries (iso, calling_code),
  CHECK (e164 = '+' || calling_code || national),
  CHECK (starts_with(national, area_code)),
  CHECK ((assigned_account IS NULL) = (assigned_at IS NULL)),
  -- unique E.164 (e164 is '+' || calling_code || national); deliberately not a btree on e164:
  -- see numbers_available_e164 below
  UNIQUE (calling_code, national)
);
-- Exact lookups by E.164 (holds, GetNumber); a hash index offers no order to walk.
CREATE INDEX numbers_e164_lookup ON inventory.numbers USING hash (e164);

-- Planner statistics: dependencies between location columns, so combined filters are
-- estimated as such; and the expressions searched on, so "a run of 4 sevens" or a locality is
-- known to be rare and served from its own index rather than by walking a broad one.
CREATE STATISTICS inventory.numbers_location (dependencies, mcv)
  ON country, type, region, area_code FROM inventory.numbers;
CREATE STATISTICS inventory.numbers_runs_low
  ON (digit_runs[1]), (digit_runs[2]), (digit_runs[3]), (digit_runs[4]), (digit_runs[5])
  FROM inventory.numbers;
CREATE STATISTICS inventory.numbers_runs_high
  ON (digit_runs[6]), (digit_runs[7]), (digit_runs[8]), (digit_runs[9]), (digit_runs[10])
  FROM inventory.numbers;
CREATE STATISTICS inventory.numbers_locality ON (lower(locality)) FROM inventory.numbers;

-- Search indexes: partial on numbers that are not assigned, each ending in e164 so that an
-- equality on the leading column (plus an e164 range from prefix/country/area code/anchored
-- pattern, plus the keyset cursor) walks rows already in result order and stops at the limit.
--
-- The bare e164 walk carries the always-true predicate `event_sequence >= 0` as a gate (no
-- search filter implies it): the search adds that clause only when no country/type/region/
-- locality filter is given. Those filters correlate
-- with e164 order (all +44 numbers sort after all +1 numbers, toll-free after most area codes),
-- which the planner cannot see; gated out, it walks their own (column, e164) index instead of
-- filtering its way along e164 to rows that sit far down the order.
-- It covers national and held_until, so a pattern walk reads the index only (no heap visits).
CREATE INDEX numbers_available_e164 ON inventory.numbers (e164) INCLUDE (national, held_until)
  WHERE assigned_account IS NULL AND event_sequence >= 0;
CREATE INDEX numbers_available_country ON inventory.numbers (country, e164)
  WHERE assigned_account IS NULL;
CREATE INDEX numbers_available_type ON inventory.numbers (type, e164)
  WHERE assigned_account IS NULL;
CREATE INDEX numbers_available_country_type ON inventory.numbers (country, type, e164)
  WHERE assigned_account IS NULL;
CREATE INDEX numbers_available_region ON inventory.numbers (region, e164)
  WHERE assigned_account IS NULL;
CREATE INDEX numbers_available_locality ON inventory.numbers (lower(locality), e164)
  WHERE assigned_account IS NULL;
CREATE INDEX numbers_available_area_code ON inventory.numbers (area_code, e164)
  WHERE assigned_account IS NULL;
-- Repeated digits: one ordered scan per run length (max_run = k, k+1, …) merged by e164.
CREATE INDEX numbers_available_max_run ON inventory.numbers (max_run, e164)
  WHERE assigned_account IS NULL AND max_run >= 3;
CREATE INDEX numbers_available_run_0 ON inventory.numbers ((digit_runs[1]), e164)
  WHERE assigned_account IS NULL AND digit_runs[1] >= 2;
CREATE INDEX numbers_available_run_1 ON inventory.numbers ((digit_runs[2]), e164)
  WHERE assigned_account IS NULL AND digit_runs[2] >= 2;
CREATE INDEX numbers_available_run_2 ON inventory.numbers ((digit_runs[3]), e164)
  WHERE assigned_account IS NULL AND digit_runs[3] >= 2;
CREATE INDEX numbers_available_run_3 ON inventory.numbers ((digit_runs[4]), e164)
  WHERE assigned_account IS NULL AND digit_runs[4] >= 2;
CREATE INDEX numbers_available_run_4 ON inventory.numbers ((digit_runs[5]), e164)
  WHERE assigned_account IS NULL AND digit_runs[5] >= 2;
CREATE INDEX numbers_available_run_5 ON inventory.numbers ((digit_runs[6]), e164)
  WHERE assigned_account IS NULL AND digit_runs[6] >= 2;
CREATE INDEX numbers_available_run_6 ON inventory.numbers ((digit_runs[7]), e164)
  WHERE assigned_account IS NULL AND digit_runs[7] >= 2;
CREATE INDEX numbers_available_run_7 ON inventory.numbers ((digit_runs[8]), e164)
  WHERE assigned_account IS NULL AND digit_runs[8] >= 2;
CREATE INDEX numbers_available_run_8 ON inventory.numbers ((digit_runs[9]), e164)
  WHERE assigned_account IS NULL AND digit_runs[9] >= 2;
CREATE INDEX numbers_available_run_9 ON inventory.numbers ((digit_runs[10]), e164)
  WHERE assigned_account IS NULL AND digit_runs[10] >= 2;
-- Patterns: trigram GIN on the national number serves LIKE '%263333%', '415%1234', '%?12_4'.
DO $$
DECLARE
  trgm_schema text;
BEGIN
  SELECT n.nspname INTO trgm_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
   WHERE e.extname = 'pg_trgm';
  EXECUTE format(
    'CREATE INDEX numbers_available_national_trgm ON inventory.numbers '
    'USING gin (national %I.gin_trgm_ops) WHERE assigned_account IS NULL',
    trgm_schema);
END
$$;
-- The account's numbers, newest assignment first.
CREATE INDEX numbers_assigned ON inventory.numbers (assigned_account, assigned_at DESC, id DESC)
  WHERE assigned_account IS NOT NULL;

CREATE TABLE inventory.holds (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  number_id text NOT NULL REFERENCES inventory.numbers (id),
  e164 text NOT NULL,
  -- 'active' past expires_at reads as 'expired' (lazy expiry); the sweeper makes it so
  status text NOT NULL CHECK (status IN ('active', 'converted', 'released', 'expired')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  released_at timestamptz,
  converted_at timestamptz,
  expired_at timestamptz,
  idempotency_key text
);
CREATE UNIQUE INDEX holds_idempotency_key ON inventory.holds (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX holds_active_by_account ON inventory.holds (account_id, expires_at)
  WHERE status = 'active';
CREATE INDEX holds_active_by_expiry ON inventory.holds (expires_at)
  WHERE status = 'active';
CREATE INDEX holds_number ON inventory.holds (number_id);

-- Transactional outbox: written in the transaction of each state change; a relay publishes.
CREATE TABLE inventory.outbox (
  id text PRIMARY KEY,
  type text NOT NULL,
  account_id text NOT NULL,
  resource_id text NOT NULL,
  sequence bigint NOT NULL,
  data jsonb NOT NULL,
  -- W3C trace context of the request that caused the event (the kit's relay carries it on).
  trace_carrier jsonb,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz,
  UNIQUE (resource_id, sequence)
);
CREATE INDEX outbox_unpublished ON inventory.outbox (occurred_at, id)
  WHERE published_at IS NULL;

-- Down Migration

DROP TABLE IF EXISTS inventory.outbox;
DROP TABLE IF EXISTS inventory.holds;
DROP TABLE IF EXISTS inventory.numbers;
DROP TABLE IF EXISTS inventory.countries;
