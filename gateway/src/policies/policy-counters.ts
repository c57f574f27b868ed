/**
 * Counters of the traffic policies, read by the metrics endpoint (to come) and by tests.
 * Plain monotonic numbers: cheap to bump on the request path.
 */
export class PolicyCounters {
  /** Rate-limit decisions taken by the replica-local fallback because Redis failed (fail-open). */
  rateLimitStoreFailures = 0;
  /** Requests answered 429 rate-limited. */
  rateLimited = 0;
  /** Responses replayed from the Idempotency-Key store. */
  idempotentReplays = 0;
  /** 409 idempotency-mismatch and idempotency-in-progress answers. */
  idempotencyConflicts = 0;
  /** Stale in-progress claims taken over after their lease ran out. */
  idempotencyLeaseTakeovers = 0;

  snapshot(): Record<string, number> {
    return { ...(this as unknown as Record<string, number>) };
  }
}
