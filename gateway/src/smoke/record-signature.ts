import canonicalize from "canonicalize";
import { createLocalJWKSet, flattenedVerify, type JWTVerifyGetKey } from "jose";
import type { usage } from "@switchboard/proto";
import { toJwk } from "../records/usage-jwks.js";
import { toUsageEvent } from "../routes/usage.js";

/** The JWKS the gateway publishes for usage records, from the usage service's key list. */
export function recordKeySet(keys: readonly usage.PublicKey[]): JWTVerifyGetKey {
  return createLocalJWKSet({ keys: keys.map(toJwk) });
}

/**
 * Verifies a record as API.md tells clients to: its REST item without `signature`, in RFC 8785
 * canonical JSON, is the detached payload of the compact JWS in `signature` (EdDSA, `kid`).
 */
export async function recordVerifies(
  record: usage.UsageRecord,
  keys: JWTVerifyGetKey,
): Promise<boolean> {
  const { signature, ...unsigned } = toUsageEvent(record);
  const [protectedHeader, payload, sig] = signature.split(".");
  if (payload !== "" || !protectedHeader || !sig) return false;
  try {
    await flattenedVerify(
      {
        protected: protectedHeader,
        payload: Buffer.from(canonicalize(unsigned) ?? "", "utf8").toString("base64url"),
        signature: sig,
      },
      // A local JWKS resolves any JWS header; jose types it for JWTs only.
      keys as Parameters<typeof flattenedVerify>[1],
      { algorithms: ["EdDSA"] },
    );
    return true;
  } catch {
    return false;
  }
}
