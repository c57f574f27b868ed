import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/**
 * The request fingerprint an Idempotency-Key is bound to: SHA-256 over the method, the
 * versionless path (`/v1/api/x` and `/api/x` are one request) and the RFC 8785 canonical JSON of
 * the body (key order and number spelling do not matter; an absent body is empty).
 */
export function requestFingerprint(method: string, versionlessPath: string, body: unknown): Buffer {
  const canonical = body === undefined ? "" : (canonicalize(body) ?? "");
  return createHash("sha256")
    .update(method.toUpperCase())
    .update("\n")
    .update(versionlessPath)
    .update("\n")
    .update(canonical)
    .digest();
}
