import { windowSeconds, type BucketLimit } from "./rate-limit-config.js";
import type { BucketDecision } from "@switchboard/kit";

/**
 * The rate-limit fields of a reply: the de-facto `X-RateLimit-*` set and the IETF
 * `RateLimit-Policy` / `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers: a quoted policy
 * name with `q` quota and `w` window, then `r` remaining and `t` seconds until reset).
 * For a token bucket the quota is the capacity and the window the time an empty bucket takes to
 * fill again.
 */
export function rateLimitHeaders(
  resource: string,
  limit: BucketLimit,
  decision: BucketDecision,
): Record<string, string> {
  const name = JSON.stringify(resource);
  return {
    "X-RateLimit-Limit": String(limit.capacity),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(decision.resetSeconds),
    "X-RateLimit-Resource": resource,
    "RateLimit-Policy": `${name};q=${limit.capacity};w=${windowSeconds(limit)}`,
    RateLimit: `${name};r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
