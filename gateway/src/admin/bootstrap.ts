import { DomainError, type Queryable } from "@switchboard/kit";
import { scopes, type Scope } from "../auth/scopes.js";
import { hashSecret, verifySecret } from "../auth/secret-hash.js";
import { checkClientSecret } from "./clients.js";
import { Checks, accountIdPattern, clientIdPattern } from "./validation.js";

export interface BootstrapInput {
  accountId: string;
  clientId: string;
  clientSecret: string;
  accountName?: string;
}

export interface BootstrapResult {
  accountId: string;
  clientId: string;
  accountCreated: boolean;
  clientCreated: boolean;
  /** The stored secret did not match and was replaced. */
  secretUpdated: boolean;
  /** The client was disabled by an administrator; bootstrap leaves that decision alone. */
  clientDisabled: boolean;
}

interface ExistingClient {
  account_id: string;
  secret_hash: string;
  scopes: string[];
  disabled_at: Date | null;
}

/**
 * Makes sure the bootstrap account and client exist (BOOTSTRAP_* configuration). Idempotent
 * and safe for replicas starting together: the client gets every scope and the configured
 * secret; an existing client of another account is a conflict, never moved.
 */
export async function ensureBootstrap(
  db: Queryable,
  input: BootstrapInput,
): Promise<BootstrapResult> {
  const checks = new Checks()
    .check(
      accountIdPattern.test(input.accountId),
      "BOOTSTRAP_ACCOUNT",
      "must be acct_ followed by 1 to 64 of a-z 0-9 _ -",
    )
    .check(
      clientIdPattern.test(input.clientId),
      "BOOTSTRAP_CLIENT_ID",
      "must be 1 to 255 visible ASCII characters",
    );
  checkClientSecret(checks, input.clientSecret, "BOOTSTRAP_CLIENT_SECRET");
  checks.done();

  const account = await db.query(
    `INSERT INTO gateway.accounts (id, name) VALUES ($1, $2)
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [input.accountId, input.accountName ?? "Default account"],
  );
  const result: BootstrapResult = {
    accountId: input.accountId,
    clientId: input.clientId,
    accountCreated: account.rows.length === 1,
    clientCreated: false,
    secretUpdated: false,
    clientDisabled: false,
  };
  const allScopes: Scope[] = [...scopes];
  const created = await db.query(
    `INSERT INTO gateway.clients (client_id, account_id, name, secret_hash, scopes)
     VALUES ($1, $2, 'bootstrap', $3, $4)
     ON CONFLICT (client_id) DO NOTHING RETURNING client_id`,
    [input.clientId, input.accountId, await hashSecret(input.clientSecret), allScopes],
  );
  if (created.rows.length === 1) return { ...result, clientCreated: true };

  const { rows } = await db.query<ExistingClient>(
    "SELECT account_id, secret_hash, scopes, disabled_at FROM gateway.clients WHERE client_id = $1",
    [input.clientId],
  );
  const existing = rows[0];
  if (!existing) throw new Error("the bootstrap client vanished while it was being ensured");
  if (existing.account_id !== input.accountId) {
    throw new DomainError(
      "conflict",
      `client ${input.clientId} belongs to account ${existing.account_id}, not ${input.accountId}`,
    );
  }
  const secretMatches = await verifySecret(input.clientSecret, existing.secret_hash);
  await db.query(
    `UPDATE gateway.clients SET scopes = $2, secret_hash = coalesce($3, secret_hash)
      WHERE client_id = $1`,
    [input.clientId, allScopes, secretMatches ? null : await hashSecret(input.clientSecret)],
  );
  return {
    ...result,
    secretUpdated: !secretMatches,
    clientDisabled: existing.disabled_at !== null,
  };
}
