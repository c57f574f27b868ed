import { assertSchemaName } from "../events/outbox-sql.js";

/**
 * `<schema>.signing_keys`: the DDL a service pastes into one of its own migrations, e.g.
 *   node -e 'import("@switchboard/kit").then(k => console.log(k.createSigningKeysTable("usage")))'
 * Same columns, checks and "one active key per purpose" index as `gateway.signing_keys`
 * (gateway/migrations/1795244400000_identity.sql); nothing here migrates by itself.
 */
export function createSigningKeysTable(schema: string): string {
  const s = `"${assertSchemaName(schema)}"`;
  return `CREATE TABLE IF NOT EXISTS ${s}.signing_keys (
  kid text PRIMARY KEY,
  -- What the key signs, e.g. usage-record, message-template, passport.
  purpose text NOT NULL CHECK (purpose ~ '^[a-z][a-z0-9-]{0,63}$'),
  alg text NOT NULL,
  public_jwk jsonb NOT NULL,
  -- v1.<scrypt params>.<salt>.<iv>.<ciphertext>.<tag>: PKCS#8 under AES-256-GCM, AAD = kid + purpose + alg.
  private_key_encrypted text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'retired')),
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz,
  CHECK ((status = 'retired') = (retired_at IS NOT NULL))
);

-- At most one active key per purpose.
CREATE UNIQUE INDEX IF NOT EXISTS signing_keys_active_key
  ON ${s}.signing_keys (purpose) WHERE status = 'active';
`;
}
