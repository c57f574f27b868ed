-- Up Migration

-- Consecutive failed client authentications at /oauth/token, per presented client id (by its
-- SHA-256, so arbitrary input is never stored and unknown ids are counted like known ones).
-- From the fifth failure in a row the id is locked for 1 s, doubling per further failure up to
-- 15 minutes; a locked id is refused without hashing. A success clears the row; failures more
-- than 15 minutes apart start counting again.
CREATE TABLE gateway.client_lockouts (
  client_key bytea PRIMARY KEY CHECK (length(client_key) = 32),
  failures integer NOT NULL CHECK (failures > 0),
  last_failure_at timestamptz NOT NULL,
  locked_until timestamptz
);

-- Down Migration
DROP TABLE gateway.client_lockouts;
