import type { Logger, PublicJwk } from "@switchboard/kit";
import type { usage } from "@switchboard/proto";
import { call, type Backend } from "../backends.js";

export const toJwk = (key: usage.PublicKey): PublicJwk => ({
  kty: key.kty,
  crv: key.crv,
  x: key.x,
  ...(key.y !== undefined ? { y: key.y } : {}),
  kid: key.kid,
  alg: key.alg,
  use: "sig",
});

/**
 * The usage service's record-verification keys for the gateway's JWKS, asked for on every JWKS
 * request (a rotation shows at once). While the usage service does not answer, the keys it last
 * listed are served, so records stay verifiable through its restarts.
 */
export function usageKeySource(
  backend: Backend<usage.UsageServiceClient>,
  options: { deadlineMs: number; logger: Logger },
): () => Promise<PublicJwk[]> {
  let lastKnown: PublicJwk[] = [];
  return async () => {
    try {
      const response = await call(
        backend,
        (c) => c.listSigningKeys,
        {},
        {
          deadlineMs: options.deadlineMs,
          requestId: "",
        },
      );
      lastKnown = response.keys.map(toJwk);
    } catch (error) {
      options.logger.warn({ err: error }, "usage keys unavailable; serving the last known");
    }
    return lastKnown;
  };
}
