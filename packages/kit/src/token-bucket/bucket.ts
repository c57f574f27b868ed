/** A bucket's size and how fast it fills. */
export interface BucketLimit {
  capacity: number;
  refillPerSecond: number;
}

/** The outcome of taking one token from a bucket. */
export interface BucketDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Tokens left, fractional: how far the bucket is from the next token. */
  tokens: number;
  /** Seconds until the bucket is full again (X-RateLimit-Reset). */
  resetSeconds: number;
  /** Seconds until one token is available (Retry-After); 0 when allowed. */
  retryAfterSeconds: number;
}

/**
 * Where buckets live: Redis (shared by every replica) or this process (embedded mode).
 * `take` removes `cost` tokens when the bucket holds them and reports the state either way.
 */
export interface BucketStore {
  readonly kind: "redis" | "memory";
  take(key: string, limit: BucketLimit, cost?: number): Promise<BucketDecision>;
  close(): Promise<void>;
}

/**
 * The decision for a bucket holding `tokens` (fractional) after the take. Shared by both stores
 * so they round identically.
 */
export function decisionFor(
  allowed: boolean,
  tokens: number,
  limit: BucketLimit,
  cost: number,
): BucketDecision {
  const missing = Math.max(0, limit.capacity - tokens);
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens + 1e-9)),
    tokens,
    resetSeconds: Math.ceil(missing / limit.refillPerSecond - 1e-9),
    retryAfterSeconds: allowed
      ? 0
      : Math.max(1, Math.ceil((cost - tokens) / limit.refillPerSecond)),
  };
}
