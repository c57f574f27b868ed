import {
  countRateLimitStoreError,
  type Logger,
  type BucketDecision,
  type BucketStore,
} from "@switchboard/kit";
import type { PolicyCounters } from "./policy-counters.js";
import type { BucketLimit } from "./rate-limit-config.js";

/**
 * Fail-open around the shared store: when Redis errors or times out, the decision is taken by a
 * replica-local bucket instead, so the gateway keeps serving (and keeps sending honest headers
 * and a per-replica limit) rather than turning a Redis outage into an API outage. Every such
 * decision bumps `rateLimitStoreFailures`; the warning is logged at most once per `logEveryMs`.
 */
export class FailOpenBucketStore implements BucketStore {
  readonly kind: BucketStore["kind"];
  private lastWarning = 0;
  private suppressed = 0;

  constructor(
    private readonly primary: BucketStore,
    private readonly fallback: BucketStore,
    private readonly options: { counters: PolicyCounters; logger: Logger; logEveryMs?: number },
  ) {
    this.kind = primary.kind;
  }

  async take(key: string, limit: BucketLimit, cost = 1): Promise<BucketDecision> {
    try {
      return await this.primary.take(key, limit, cost);
    } catch (error) {
      this.options.counters.rateLimitStoreFailures += 1;
      countRateLimitStoreError();
      this.warn(error);
      return this.fallback.take(key, limit, cost);
    }
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < (this.options.logEveryMs ?? 10_000)) {
      this.suppressed += 1;
      return;
    }
    this.options.logger.warn(
      {
        reason: error instanceof Error ? error.message.slice(0, 200) : "unknown",
        suppressed: this.suppressed,
        failOpenTotal: this.options.counters.rateLimitStoreFailures,
      },
      "rate-limit store unavailable; failing open to the replica-local bucket",
    );
    this.lastWarning = now;
    this.suppressed = 0;
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.fallback.close()]);
  }
}
