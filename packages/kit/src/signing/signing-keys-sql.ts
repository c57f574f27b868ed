import { assertSchemaName } from "../events/outbox-sql.js";

/**
 * `<schema>.signing_keys`, the table of the signing key store. Kit's `migrate` applies it to the
 * schema of every service that names `signing_keys` in `kitTables` (kit-tables.ts), the
 * gateway's included, on every start; so it must stay idempotent.
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
