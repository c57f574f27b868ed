-- Up Migration

-- The gateway's record outbox (docs/architecture.md rule 4): one row per answered request, its
-- api.request record (usage.RequestRecord in proto3 JSON), committed before the reply is sent —
-- in the same transaction as the keyed request's stored answer. The record relay hands rows to
-- the usage service in batches and deletes them once the ledger holds them; `relay_after` is
-- the lease of a batch being handed over (a relay that dies lets it lapse and another resends:
-- the ledger skips a request id it already holds).
CREATE TABLE gateway.request_records (
  request_id text PRIMARY KEY,
  record jsonb NOT NULL,
  relay_after timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX request_records_relay_idx ON gateway.request_records (relay_after);

-- Down Migration
DROP TABLE gateway.request_records;
