import type { ProblemKind } from "@switchboard/kit";
import type { RouteSpec } from "../http/route-spec.js";

/**
 * Unsafe methods of authenticated routes honour Idempotency-Key (keys are scoped to the
 * account, so the public routes, e.g. the token endpoint, have none).
 */
export const acceptsIdempotencyKey = (route: RouteSpec): boolean =>
  route.scope !== null && route.method !== "get";

/** Problem kinds any route of this shape can answer with, beside its own. */
export function commonProblems(route: RouteSpec): ProblemKind[] {
  const kinds: ProblemKind[] = ["rate-limited", "internal"];
  if (route.scope !== null) {
    kinds.push(
      "unauthenticated",
      "invalid-token",
      "insufficient-scope",
      "service-unavailable",
      "upstream-timeout",
    );
  }
  if (route.query || route.body) kinds.push("validation-failed");
  // A path parameter that is not valid percent-encoded UTF-8 cannot be decoded (http/app.ts).
  if (route.body || route.path.includes("{")) kinds.push("malformed-request");
  if (route.body) kinds.push("payload-too-large", "unsupported-media-type");
  if (acceptsIdempotencyKey(route)) {
    kinds.push("invalid-idempotency-key", "idempotency-mismatch", "idempotency-in-progress");
  }
  return kinds;
}
