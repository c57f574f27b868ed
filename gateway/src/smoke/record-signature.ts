import { createLocalJWKSet } from "jose";
import type { RecordVerifier } from "@switchboard/agent-smoke";
import { verifySignedRecord } from "@switchboard/kit";
import { toJwk } from "../records/usage-jwks.js";
import { toUsageEvent } from "../routes/views/usage.js";

/**
 * The smoke's record check: a record verifies as docs/api.md tells clients to, in its REST form
 * (what a client receives), against the JWKS the gateway publishes from the usage service's keys.
 */
export const recordVerifier: RecordVerifier = (keys) => {
  const keySet = createLocalJWKSet({ keys: keys.map(toJwk) });
  return (record) =>
    verifySignedRecord(toUsageEvent(record) as unknown as Record<string, unknown>, keySet);
};
