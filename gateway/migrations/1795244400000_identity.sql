-- Up Migration

-- Identity of the public gateway: accounts, OAuth clients, service tokens and signing keys.
-- Secrets are never stored: client secrets as scrypt hashes, service tokens as SHA-256
-- digests, private signing keys encrypted (AES-256-GCM) under SIGNING_KEY_SECRET.

CREATE TABLE gateway.accounts (
  id text PRIMARY KEY CHECK (id ~ '^acct_[a-z0-9][a-z0-9_-]{0,63}$'),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE gateway.clients (
  client_id text PRIMARY KEY CHECK (client_id ~ '^[!-~]{1,255}$'),
  account_id text NOT NULL REFERENCES gateway.accounts (id),
  name text NOT NULL DEFAULT '',
  -- PHC-style string: $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash> (base64url)
  secret_hash text NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  disabled_at timestamptz
);

CREATE INDEX clients_account_idx ON gateway.clients (account_id, client_id);

CREATE TABLE gateway.service_tokens (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES gateway.accounts (id),
  name text NOT NULL DEFAULT '',
  -- SHA-256 of the whole token (sbt_…); the token itself is shown once and never stored.
  token_hash bytea NOT NULL CHECK (length(token_hash) = 32),
  -- Redacted display form, e.g. sbt_AbCd…wxyz.
  display_hint text NOT NULL,
  scopes text[] NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX service_tokens_token_hash_key ON gateway.service_tokens (token_hash);
CREATE INDEX service_tokens_account_idx ON gateway.service_tokens (account_id, id);

-- Kit's signing_keys: applied by kit's migrate (kitTables, src/auth/migrations.ts), once created here.

-- Down Migration

DROP TABLE gateway.service_tokens;
DROP TABLE gateway.clients;
DROP TABLE gateway.accounts;
