import { performance } from "node:perf_hooks";
import { decisionFor, type BucketDecision, type BucketLimit, type BucketStore } from "./bucket.js";

interface Bucket {
  tokens: number;
  /** performance.now() of the last update, in milliseconds (monotonic). */
  at: number;
  /** When the bucket is full again and can be forgotten. */
  fullAt: number;
}

/**
 * Token buckets in this process: the embedded mode's store when REDIS_URL is unset, and the
 * replica-local fallback while Redis is unreachable. Same arithmetic as the Lua script, on a
 * monotonic clock. Full buckets are forgotten (a missing bucket is a full one), so memory is
 * bounded by the clients active in the last refill period; `maxBuckets` caps it outright.
 */
export class MemoryBucketStore implements BucketStore {
  readonly kind = "memory" as const;
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly options: { now?: () => number; maxBuckets?: number; sweepMs?: number } = {},
  ) {
    this.sweeper = setInterval(() => this.sweep(), options.sweepMs ?? 30_000);
    this.sweeper.unref();
  }

  private now(): number {
    return this.options.now ? this.options.now() : performance.now();
  }

  async take(key: string, limit: BucketLimit, cost = 1): Promise<BucketDecision> {
    const now = this.now();
    const bucket = this.buckets.get(key);
    let tokens = limit.capacity;
    if (bucket) {
      const elapsed = Math.max(0, now - bucket.at) / 1000;
      tokens = Math.min(limit.capacity, bucket.tokens + elapsed * limit.refillPerSecond);
    }
    const allowed = tokens >= cost;
    if (allowed) tokens -= cost;
    const fullAt = now + ((limit.capacity - tokens) / limit.refillPerSecond) * 1000;
    if (!bucket && this.buckets.size >= (this.options.maxBuckets ?? 100_000)) this.evictOldest();
    this.buckets.set(key, { tokens, at: now, fullAt });
    return decisionFor(allowed, tokens, limit, cost);
  }

  /** Buckets currently remembered (for tests). */
  get size(): number {
    return this.buckets.size;
  }

  sweep(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) if (bucket.fullAt <= now) this.buckets.delete(key);
  }

  private evictOldest(): void {
    const oldest = this.buckets.keys().next();
    if (!oldest.done) this.buckets.delete(oldest.value);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.buckets.clear();
  }
}
