-- Up Migration

-- Digest nonces used by REGISTERs that authenticated (RFC 7616 §3.3, §5.12: the digest does not
-- cover Contact or Call-ID, so a captured Authorization must not be accepted twice). With
-- qop=auth each use of a nonce carries a higher nonce-count: the highest seen is kept, and a
-- request whose nc is not above it is a replay. One row per nonce, shared by every replica;
-- deleted once the nonce is stale anyway (expires_at).
CREATE TABLE call_control.sip_nonce_uses (
  nonce text PRIMARY KEY CHECK (char_length(nonce) BETWEEN 1 AND 64),
  last_nc bigint NOT NULL CHECK (last_nc BETWEEN 1 AND 4294967295),
  expires_at timestamptz NOT NULL
);
CREATE INDEX sip_nonce_uses_expiry ON call_control.sip_nonce_uses (expires_at);

-- Down Migration

DROP TABLE call_control.sip_nonce_uses;
