import type { Logger, PublicJwk } from "@switchboard/kit";
import type { messaging } from "@switchboard/proto";
import { call, type Backend } from "../backends.js";

/**
 * The messaging service's template-verification keys for the gateway's JWKS, asked for on every
 * JWKS request. While the service does not answer, the keys it last listed are served, so
 * template signatures stay verifiable through its restarts.
 */
export function messagingKeySource(
  backend: Backend<messaging.MessagingServiceClient>,
  options: { deadlineMs: number; logger: Logger },
): () => Promise<PublicJwk[]> {
  let lastKnown: PublicJwk[] = [];
  return async () => {
    try {
      const response = await call(
        backend,
        (c) => c.listPublicKeys,
        {},
        {
          deadlineMs: options.deadlineMs,
          requestId: "",
        },
      );
      lastKnown = response.keysJson.map((json) => JSON.parse(json) as PublicJwk);
    } catch (error) {
      options.logger.warn({ err: error }, "messaging keys unavailable; serving the last known");
    }
    return lastKnown;
  };
}
