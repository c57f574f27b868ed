-- Up Migration
-- GET /api/messages lists by creation (created_at, then id), newest or oldest first, optionally
-- within created_after/created_before (messages/queries.ts): the listing index follows.
DROP INDEX IF EXISTS messaging.messages_by_account;
CREATE INDEX messages_by_account_created
  ON messaging.messages (account_id, created_at DESC, id DESC);

-- Down Migration
DROP INDEX IF EXISTS messaging.messages_by_account_created;
CREATE INDEX messages_by_account ON messaging.messages (account_id, id DESC);
