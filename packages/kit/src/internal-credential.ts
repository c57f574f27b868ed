import { jwtVerify, SignJWT } from "jose";
import { internalKey } from "./platform-secret.js";
import { createTtlCache } from "./ttl-cache.js";

/**
 * The internal credential every gRPC call carries (docs/architecture.md rule 10): a short-lived JWT signed with a key
 * derived from INTERNAL_SECRET, which every platform process holds and no client does. Its
 * audience is the service called; it names the account the call acts for and the principal
 * behind it. The service takes the account from it, never from the request alone.
 */
export const INTERNAL_ISSUER = "switchboard-internal";
export const CREDENTIAL_METADATA = "x-switchboard-credential";
const lifetimeSeconds = 60;
const algorithm = "HS256";

export interface InternalClaims {
  /** The service called (`inventory`, `call-control`, `messaging`, `usage`, `webhook`). */
  audience: string;
  /** The account the call acts for; empty for platform work that acts for none. */
  accountId: string;
  /** Who is behind the call: a client or service token id, or the calling component. */
  principal: string;
}

let key: Uint8Array | undefined;
const secretKey = () => (key ??= new Uint8Array(internalKey("grpc-credential")));

/** Tokens minted, reused until half their lifetime is gone. */
const minted = createTtlCache<string>({ ttlMs: (lifetimeSeconds / 2) * 1000, maxEntries: 10_000 });

export async function mintInternalCredential(claims: InternalClaims): Promise<string> {
  const cacheKey = `${claims.audience}\n${claims.accountId}\n${claims.principal}`;
  const cached = minted.get(cacheKey);
  if (cached) return cached;
  const token = await new SignJWT({ acct: claims.accountId })
    .setProtectedHeader({ alg: algorithm, typ: "switchboard-internal+jwt" })
    .setIssuer(INTERNAL_ISSUER)
    .setAudience(claims.audience)
    .setSubject(claims.principal)
    .setIssuedAt()
    .setExpirationTime(`${lifetimeSeconds}s`)
    .sign(secretKey());
  minted.set(cacheKey, token);
  return token;
}

/** Tokens verified, remembered until they expire (by the token itself: it is not a secret alone). */
const verified = createTtlCache<InternalClaims & { exp: number }>({
  ttlMs: lifetimeSeconds * 1000,
  maxEntries: 10_000,
});

export class InternalCredentialError extends Error {
  override readonly name = "InternalCredentialError";
}

/** The claims of a credential for `audience`; throws InternalCredentialError otherwise. */
export async function verifyInternalCredential(
  token: string | undefined,
  audience: string,
): Promise<InternalClaims> {
  if (!token) throw new InternalCredentialError("no internal credential");
  const known = verified.get(token);
  if (known && known.audience === audience && known.exp > Date.now() / 1000) return known;
  try {
    const { payload } = await jwtVerify(token, secretKey(), {
      algorithms: [algorithm],
      issuer: INTERNAL_ISSUER,
      audience,
      requiredClaims: ["exp", "sub"],
      clockTolerance: 5,
    });
    if (typeof payload.acct !== "string") throw new Error("no acct claim");
    const claims = {
      audience,
      accountId: payload.acct,
      principal: payload.sub!,
      exp: payload.exp!,
    };
    verified.set(token, claims);
    return claims;
  } catch {
    throw new InternalCredentialError("the internal credential does not verify");
  }
}
