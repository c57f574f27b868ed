-- Up Migration
-- GET /api/calls lists by creation (created_at, then id), newest or oldest first, optionally
-- within created_after/created_before (calls/call-queries.ts): the listing indexes follow.
DROP INDEX IF EXISTS call_control.calls_by_account;
DROP INDEX IF EXISTS call_control.calls_by_account_status;
DROP INDEX IF EXISTS call_control.calls_by_account_direction;
CREATE INDEX calls_by_account_created
  ON call_control.calls (account_id, created_at DESC, id DESC);
CREATE INDEX calls_by_account_status_created
  ON call_control.calls (account_id, status, created_at DESC, id DESC);
CREATE INDEX calls_by_account_direction_created
  ON call_control.calls (account_id, direction, created_at DESC, id DESC);

-- Down Migration
DROP INDEX IF EXISTS call_control.calls_by_account_direction_created;
DROP INDEX IF EXISTS call_control.calls_by_account_status_created;
DROP INDEX IF EXISTS call_control.calls_by_account_created;
CREATE INDEX calls_by_account ON call_control.calls (account_id, id DESC);
CREATE INDEX calls_by_account_status ON call_control.calls (account_id, status, id DESC);
CREATE INDEX calls_by_account_direction ON call_control.calls (account_id, direction, id DESC);
