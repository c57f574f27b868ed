import type { Redis } from "ioredis";
import { TOKEN_BUCKET_SCRIPT } from "./script.js";
import { decisionFor, type BucketDecision, type BucketLimit, type BucketStore } from "./bucket.js";

type TakeToken = (
  key: string,
  capacity: number,
  refillPerSecond: number,
  cost: number,
) => Promise<[number, string]>;

/**
 * Token buckets in Redis, shared by every gateway replica: one EVALSHA round trip per request
 * (ioredis loads the script again after a NOSCRIPT, e.g. when Redis restarted).
 */
export class RedisBucketStore implements BucketStore {
  readonly kind = "redis" as const;
  private readonly takeToken: TakeToken;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    if (!("switchboardTakeToken" in redis)) {
      redis.defineCommand("switchboardTakeToken", { numberOfKeys: 1, lua: TOKEN_BUCKET_SCRIPT });
    }
    const command = (redis as unknown as { switchboardTakeToken: TakeToken }).switchboardTakeToken;
    this.takeToken = command.bind(redis);
  }

  async take(key: string, limit: BucketLimit, cost = 1): Promise<BucketDecision> {
    const [allowed, tokens] = await this.takeToken(
      `${this.prefix}${key}`,
      limit.capacity,
      limit.refillPerSecond,
      cost,
    );
    return decisionFor(allowed === 1, Number(tokens), limit, cost);
  }

  /** The connection belongs to the caller, who closes it. */
  async close(): Promise<void> {}
}
