import { createHash } from "node:crypto";
import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { createTtlCache, DomainError } from "@switchboard/kit";
import { ACCESS_TOKEN_TYPE, type AccessTokenSettings } from "./access-token.js";
import type { Principal } from "./principal.js";
import { isScope, splitScopeString, type Scope } from "./scopes.js";
import { ACCESS_TOKEN_PURPOSE, SIGNING_ALG, type SigningKeyStore } from "./signing-key-store.js";

const invalid = (detail: string, cause?: unknown) =>
  new DomainError("invalid-token", detail, {}, cause === undefined ? undefined : { cause });

/** Thrown by the key lookup; never leaves this module. */
class UnknownKeyError extends Error {}

const requiredClaims = ["exp", "iat", "jti", "sub", "client_id", "scope", "account_id"];

const clockToleranceSeconds = 5;

export interface AccessTokenVerifierOptions {
  /** Verified tokens remembered (default 10,000), each for at most `cacheTtlMs` (default 5 min). */
  cacheEntries?: number;
  cacheTtlMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Verified {
  principal: Principal;
  kid: string;
  exp: number;
}

/**
 * `verifyAccessToken` with a memory of the tokens it has verified, keyed by the token's SHA-256:
 * a client sends the same token with every request until it expires, and checking its EdDSA
 * signature again each time was several per cent of a busy gateway's CPU. A remembered token is
 * accepted only while the same checks would pass: its `exp` (with the same tolerance) has not
 * passed and its key is still one the store verifies with. Anything else goes through the full
 * verification, which gives the precise refusal.
 */
export function createAccessTokenVerifier(
  keys: SigningKeyStore,
  settings: Pick<AccessTokenSettings, "issuer" | "audience">,
  options: AccessTokenVerifierOptions = {},
): (token: string) => Promise<Principal> {
  const now = options.now ?? Date.now;
  const verified = createTtlCache<Verified>({
    ttlMs: options.cacheTtlMs ?? 5 * 60_000,
    maxEntries: options.cacheEntries ?? 10_000,
    now,
  });
  const live = (exp: number) => exp > Math.floor(now() / 1000) - clockToleranceSeconds;
  return async (token) => {
    const digest = createHash("sha256").update(token).digest("base64url");
    const known = verified.get(digest);
    if (known && live(known.exp) && (await keys.publicKey(ACCESS_TOKEN_PURPOSE, known.kid))) {
      return known.principal;
    }
    const result = await verifyAccessToken(token, keys, settings, new Date(now()));
    verified.set(digest, result);
    return result.principal;
  };
}

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
  currentDate = new Date(),
): Promise<Verified> {
  const getKey: JWTVerifyGetKey = async (header) => {
    if (typeof header.kid !== "string" || header.kid === "") throw new UnknownKeyError();
    const key = await keys.publicKey(ACCESS_TOKEN_PURPOSE, header.kid);
    if (!key) throw new UnknownKeyError();
    return key;
  };
  let payload: JWTPayload;
  let kid: unknown;
  try {
    ({
      payload,
      protectedHeader: { kid },
    } = await jwtVerify(token, getKey, {
      algorithms: [SIGNING_ALG],
      typ: ACCESS_TOKEN_TYPE,
      issuer: settings.issuer,
      audience: settings.audience,
      requiredClaims,
      clockTolerance: clockToleranceSeconds,
      currentDate,
    }));
  } catch (error) {
    throw toInvalidToken(error);
  }
  return { principal: principalOf(payload), kid: String(kid), exp: Number(payload.exp) };
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
