import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { Principal } from "../auth/index.js";

/** Who sent a request, as the fingerprint binds it: `client:cli_…` or `service_token:tok_…`. */
export const callerOf = (principal: Pick<Principal, "kind" | "principalId">): string =>
  `${principal.kind}:${principal.principalId}`;

/**
 * The request fingerprint an Idempotency-Key is bound to: SHA-256 over the caller (a key is
 * scoped to its account, but a replay answers only the client or service token that first sent
 * it: a creation's reply may hold a secret shown once), the method, the versionless path
 * (`/v1/api/x` and `/api/x` are one request) and the RFC 8785 canonical JSON of the body (key
 * order and number spelling do not matter; an absent body is empty).
 */
export function requestFingerprint(
  method: string,
  versionlessPath: string,
  body: unknown,
  caller: string,
): Buffer {
  const canonical = body === undefined ? "" : (canonicalize(body) ?? "");
  return createHash("sha256")
    .update(caller)
    .update("\n")
    .update(method.toUpperCase())
    .update("\n")
    .update(versionlessPath)
    .update("\n")
    .update(canonical)
    .digest();
}
