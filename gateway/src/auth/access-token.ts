import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import type { Scope } from "./scopes.js";
import { ACCESS_TOKEN_PURPOSE, type SigningKeyStore } from "./signing-key-store.js";

/** RFC 9068 `typ` of our access tokens. */
export const ACCESS_TOKEN_TYPE = "at+jwt";

export interface AccessTokenSettings {
  issuer: string;
  audience: string;
  /** Lifetime in seconds. */
  ttlSeconds: number;
}

export interface AccessTokenSubject {
  clientId: string;
  accountId: string;
  scopes: readonly Scope[];
}

export interface IssuedAccessToken {
  token: string;
  jti: string;
  expiresIn: number;
  scope: string;
}

/**
 * Signs an RFC 9068 access token with the active `access-token` key: header
 * `{alg: EdDSA, typ: at+jwt, kid}`, claims iss, sub, aud, exp, iat, jti, client_id, scope,
 * account_id.
 */
export async function issueAccessToken(
  keys: SigningKeyStore,
  settings: AccessTokenSettings,
  subject: AccessTokenSubject,
): Promise<IssuedAccessToken> {
  const key = await keys.activeKey(ACCESS_TOKEN_PURPOSE);
  const now = Math.floor(Date.now() / 1000);
  const jti = randomUUID();
  const scope = subject.scopes.join(" ");
  const token = await new SignJWT({
    client_id: subject.clientId,
    scope,
    account_id: subject.accountId,
  })
    .setProtectedHeader({ alg: key.alg, typ: ACCESS_TOKEN_TYPE, kid: key.kid })
    .setIssuer(settings.issuer)
    .setSubject(subject.clientId)
    .setAudience(settings.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + settings.ttlSeconds)
    .setJti(jti)
    .sign(key.privateKey);
  return { token, jti, expiresIn: settings.ttlSeconds, scope };
}
