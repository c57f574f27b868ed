import { timingSafeEqual } from "node:crypto";
import { DomainError, type Queryable } from "@switchboard/kit";
import type { Principal } from "./principal.js";
import { isScope, type Scope } from "./scopes.js";
import { hashServiceToken, isServiceTokenFormat } from "./service-token-format.js";

interface TokenRow {
  id: string;
  account_id: string;
  token_hash: Buffer;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
}

const invalid = (detail: string) => new DomainError("invalid-token", detail);

/**
 * Verifies an `sbt_` service token: looked up by its SHA-256 (unique index), the digest
 * compared again in constant time, then refused when revoked or expired.
 */
export async function verifyServiceToken(db: Queryable, token: string): Promise<Principal> {
  if (!isServiceTokenFormat(token)) throw invalid("the service token is malformed");
  const digest = hashServiceToken(token);
  const { rows } = await db.query<TokenRow>(
    `SELECT id, account_id, token_hash, scopes, expires_at, revoked_at
       FROM gateway.service_tokens WHERE token_hash = $1`,
    [digest],
  );
  const row = rows[0];
  if (!row || row.token_hash.length !== digest.length || !timingSafeEqual(row.token_hash, digest)) {
    throw invalid("the service token is not recognized");
  }
  if (row.revoked_at !== null) throw invalid("the service token has been revoked");
  if (row.expires_at !== null && row.expires_at.getTime() <= Date.now()) {
    throw invalid("the service token has expired");
  }
  return {
    accountId: row.account_id,
    principalId: row.id,
    kind: "service_token",
    scopes: new Set<Scope>(row.scopes.filter(isScope)),
  };
}
