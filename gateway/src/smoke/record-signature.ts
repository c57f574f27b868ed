import { createLocalJWKSet, type JWTVerifyGetKey } from "jose";
import { verifySignedRecord } from "@switchboard/kit";
import type { usage } from "@switchboard/proto";
import { toJwk } from "../records/usage-jwks.js";
import { toUsageEvent } from "../routes/views/usage.js";

/** The JWKS the gateway publishes for usage records, from the usage service's key list. */
export function recordKeySet(keys: readonly usage.PublicKey[]): JWTVerifyGetKey {
  return createLocalJWKSet({ keys: keys.map(toJwk) });
}

/** Verifies a record as docs/api.md tells clients to, in its REST form (what a client receives). */
export const recordVerifies = (
  record: usage.UsageRecord,
  keys: JWTVerifyGetKey,
): Promise<boolean> =>
  verifySignedRecord(toUsageEvent(record) as unknown as Record<string, unknown>, keys);
