-- Up Migration

-- Unknown client ids are counted like known ones, so guesses at made-up ids add rows that no
-- success ever deletes. A row whose last failure is older than the counting window (15 min)
-- and whose lock has run out means what no row means; the gateway deletes such rows in
-- batches as it counts failures (ClientLockout.purge), through this index.
CREATE INDEX client_lockouts_last_failure_idx ON gateway.client_lockouts (last_failure_at);

-- Down Migration
DROP INDEX gateway.client_lockouts_last_failure_idx;
