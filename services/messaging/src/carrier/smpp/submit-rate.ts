import {
  type BucketLimit,
  type BucketStore,
  MemoryBucketStore,
  RedisBucketStore,
} from "@switchboard/kit";
import { Redis } from "ioredis";

/**
 * SMPP_THROUGHPUT, shared by every messaging replica: one token bucket per SMSC account, in
 * Redis when the replicas share one (mesh), else in this process (embedded: the only one).
 * The bucket holds one token, so submits are spaced evenly, and it refills 2 % under the rate:
 * the SMSC counts submits as they arrive, and a second of arrivals must not show it one more
 * than the rate because one submit was delayed on its way (20 ms of slack per second). Waiting is serialised per replica: one take at a time asks the bucket, so a backlog
 * costs one Redis round trip per token, not one per waiting submit.
 */
export class SubmitRate {
  private readonly limit: BucketLimit;
  private readonly key: string;
  private readonly store: BucketStore;
  private readonly redis: Redis | undefined;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(options: {
    perSecond: number;
    /** The bucket's key: one SMSC account shares one rate. */
    key: string;
    redis?: { url: string; prefix: string } | undefined;
  }) {
    this.limit = { capacity: 1, refillPerSecond: options.perSecond * 0.98 };
    this.key = options.key;
    if (options.redis) {
      this.redis = new Redis(options.redis.url, { maxRetriesPerRequest: 2, lazyConnect: false });
      this.store = new RedisBucketStore(this.redis, `${options.redis.prefix}:smpp-rate:`);
    } else {
      this.store = new MemoryBucketStore();
    }
  }

  /** Resolves when this replica may send one more submit_sm. */
  take(): Promise<void> {
    const turn = this.queue.then(() => this.takeOne());
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async takeOne(): Promise<void> {
    for (;;) {
      if (this.closed) throw new Error("the submit rate is closed");
      const decision = await this.store.take(this.key, this.limit);
      if (decision.allowed) return;
      const waitMs = ((1 - decision.tokens) / this.limit.refillPerSecond) * 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(waitMs))));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.store.close();
    this.redis?.disconnect();
  }
}
