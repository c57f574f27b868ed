import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { DomainError } from "@switchboard/kit";
import { ACCESS_TOKEN_TYPE, type AccessTokenSettings } from "./access-token.js";
import type { Principal } from "./principal.js";
import { isScope, splitScopeString, type Scope } from "./scopes.js";
import { ACCESS_TOKEN_PURPOSE, SIGNING_ALG, type SigningKeyStore } from "./signing-key-store.js";

const invalid = (detail: string, cause?: unknown) =>
  new DomainError("invalid-token", detail, {}, cause === undefined ? undefined : { cause });

/** Thrown by the key lookup; never leaves this module. */
class UnknownKeyError extends Error {}

const requiredClaims = ["exp", "iat", "jti", "sub", "client_id", "scope", "account_id"];

/**
 * Verifies an access token: EdDSA only, `typ: at+jwt`, our issuer and audience, `exp`
 * required, key by `kid` from the store. Every failure becomes `invalid-token` with a detail
 * that is safe to show; a database failure while looking a key up is not a token problem and
 * propagates as is.
 */
export async function verifyAccessToken(
  token: string,
  keys: SigningKeyStore,
  settings: Pick<AccessTokenSettings, "issuer" | "audience">,
): Promise<Principal> {
  const getKey: JWTVerifyGetKey = async (header) => {
    if (typeof header.kid !== "string" || header.kid === "") throw new UnknownKeyError();
    const key = await keys.publicKey(ACCESS_TOKEN_PURPOSE, header.kid);
    if (!key) throw new UnknownKeyError();
    return key;
  };
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, getKey, {
      algorithms: [SIGNING_ALG],
      typ: ACCESS_TOKEN_TYPE,
      issuer: settings.issuer,
      audience: settings.audience,
      requiredClaims,
      clockTolerance: 5,
    }));
  } catch (error) {
    throw toInvalidToken(error);
  }
  return principalOf(payload);
}

function principalOf(payload: JWTPayload): Principal {
  const { sub, client_id: clientId, account_id: accountId, scope } = payload;
  if (
    typeof clientId !== "string" ||
    typeof accountId !== "string" ||
    typeof scope !== "string" ||
    sub !== clientId
  ) {
    throw invalid("the access token's claims are malformed");
  }
  const granted = splitScopeString(scope).filter(isScope);
  return {
    accountId,
    principalId: clientId,
    kind: "client",
    scopes: new Set<Scope>(granted),
  };
}

function toInvalidToken(error: unknown): unknown {
  if (error instanceof UnknownKeyError) {
    return invalid("the access token was signed by an unknown key");
  }
  if (!(error instanceof errors.JOSEError)) return error;
  if (error instanceof errors.JWTExpired) return invalid("the access token has expired", error);
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return invalid("the access token's signing algorithm is not accepted", error);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return invalid("the access token's signature is invalid", error);
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    const detail: Record<string, string> = {
      typ: "the access token's typ must be at+jwt",
      iss: "the access token was issued by another issuer",
      aud: "the access token is meant for another audience",
      nbf: "the access token is not valid yet",
    };
    const specific = detail[error.claim];
    if (specific) return invalid(specific, error);
    if (error.reason === "missing")
      return invalid(`the access token lacks the ${error.claim} claim`);
    return invalid("the access token's claims are invalid", error);
  }
  return invalid("the access token is malformed", error);
}
