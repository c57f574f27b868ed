import { DomainError, newId, type Queryable } from "@switchboard/kit";
import type { Scope } from "../auth/scopes.js";
import {
  generateServiceToken,
  hashServiceToken,
  serviceTokenHint,
} from "../auth/service-token-format.js";
import { requireAccount } from "./accounts.js";
import { Checks, MAX_TOKEN_LIFETIME_SECONDS, checkName, checkScopes } from "./validation.js";

/** A service token as listed: redacted to its display hint. */
export interface ServiceTokenInfo {
  id: string;
  accountId: string;
  name: string;
  displayHint: string;
  scopes: Scope[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

/** What creation returns: the token, shown this once. */
export interface CreatedServiceToken extends ServiceTokenInfo {
  token: string;
}

interface TokenRow {
  id: string;
  account_id: string;
  name: string;
  display_hint: string;
  scopes: Scope[];
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

const columns = "id, account_id, name, display_hint, scopes, expires_at, revoked_at, created_at";

const toInfo = (row: TokenRow): ServiceTokenInfo => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  displayHint: row.display_hint,
  scopes: row.scopes,
  expiresAt: row.expires_at,
  revokedAt: row.revoked_at,
  createdAt: row.created_at,
});

/** Issues an `sbt_` token for an account; only its SHA-256 and a redacted hint are stored. */
export async function createServiceToken(
  db: Queryable,
  input: {
    accountId: string;
    scopes: readonly string[];
    name?: string | undefined;
    expiresInSeconds?: number | undefined;
  },
): Promise<CreatedServiceToken> {
  const checks = new Checks();
  const scopes = checkScopes(checks, input.scopes, "#/scopes");
  checkName(checks, input.name, "#/name");
  const ttl = input.expiresInSeconds;
  checks.check(
    ttl === undefined || (Number.isInteger(ttl) && ttl > 0 && ttl <= MAX_TOKEN_LIFETIME_SECONDS),
    "#/expires_in",
    `must be a whole number of seconds from 1 to ${MAX_TOKEN_LIFETIME_SECONDS}`,
  );
  checks.done();
  await requireAccount(db, input.accountId);
  const token = generateServiceToken();
  const { rows } = await db.query<TokenRow>(
    `INSERT INTO gateway.service_tokens
       (id, account_id, name, token_hash, display_hint, scopes, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6,
             CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
     RETURNING ${columns}`,
    [
      newId("tok"),
      input.accountId,
      input.name ?? "",
      hashServiceToken(token),
      serviceTokenHint(token),
      scopes,
      ttl ?? null,
    ],
  );
  return { ...toInfo(rows[0] as TokenRow), token };
}

/** An account's service tokens, newest first, redacted. */
export async function listServiceTokens(
  db: Queryable,
  accountId: string,
): Promise<ServiceTokenInfo[]> {
  const { rows } = await db.query<TokenRow>(
    `SELECT ${columns} FROM gateway.service_tokens WHERE account_id = $1 ORDER BY id DESC`,
    [accountId],
  );
  return rows.map(toInfo);
}

/**
 * Revokes a token at once (the next request with it fails). Revoking twice keeps the first
 * time. With `accountId`, a token of another account is not found.
 */
export async function revokeServiceToken(
  db: Queryable,
  id: string,
  options: { accountId?: string } = {},
): Promise<ServiceTokenInfo> {
  const { rows } = await db.query<TokenRow>(
    `UPDATE gateway.service_tokens SET revoked_at = coalesce(revoked_at, now())
      WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)
      RETURNING ${columns}`,
    [id, options.accountId ?? null],
  );
  const row = rows[0];
  if (!row) throw new DomainError("not-found", `service token ${id} was not found`);
  return toInfo(row);
}
