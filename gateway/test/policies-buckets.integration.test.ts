import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createLogger,
  type BucketStore,
  MemoryBucketStore,
  RedisBucketStore,
} from "@switchboard/kit";
import { FailOpenBucketStore } from "../src/policies/fail-open-bucket-store.js";
import { PolicyCounters } from "../src/policies/policy-counters.js";
import {
  closeRedis,
  connectRedis,
  redisHealthCheck,
  waitUntilReady,
} from "../src/policies/redis-connection.js";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const logger = createLogger("test", { level: "silent" });
const prefix = `sbtest:${randomBytes(4).toString("hex")}:`;
const connections: Redis[] = [];
const redisStore = async () => {
  const redis = connectRedis(REDIS_URL, { commandTimeoutMs: 1_000, logger });
  connections.push(redis);
  if (!(await waitUntilReady(redis, 5_000)))
    throw new Error(`Redis is not reachable at ${REDIS_URL}`);
  return new RedisBucketStore(redis, prefix);
};

afterAll(async () => {
  await Promise.all(connections.map(closeRedis));
});

const stores: { name: string; create: () => Promise<BucketStore> }[] = [
  { name: "redis", create: redisStore },
  { name: "memory", create: async () => new MemoryBucketStore() },
];

describe.each(stores)("token bucket on $name", ({ create }) => {
  let store: BucketStore;
  const key = () => `unit:${randomBytes(6).toString("hex")}`;
  beforeAll(async () => {
    store = await create();
  });
  afterAll(() => store.close());

  it("allows a burst of capacity, then refuses with Retry-After", async () => {
    const bucket = key();
    const limit = { capacity: 3, refillPerSecond: 0.5 };
    const decisions = [];
    for (let i = 0; i < 4; i += 1) decisions.push(await store.take(bucket, limit));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[0]).toMatchObject({ resetSeconds: 2, retryAfterSeconds: 0 });
    expect(decisions[3]).toMatchObject({ resetSeconds: 6, retryAfterSeconds: 2 });
  });

  it("refills at the configured rate", async () => {
    const bucket = key();
    const limit = { capacity: 2, refillPerSecond: 20 };
    await store.take(bucket, limit);
    await store.take(bucket, limit);
    expect((await store.take(bucket, limit)).allowed).toBe(false);
    await sleep(120);
    const after = await store.take(bucket, limit);
    expect(after.allowed).toBe(true);
  });

  it("keeps buckets apart by key", async () => {
    const limit = { capacity: 1, refillPerSecond: 0.01 };
    const [a, b] = [key(), key()];
    expect((await store.take(a, limit)).allowed).toBe(true);
    expect((await store.take(a, limit)).allowed).toBe(false);
    expect((await store.take(b, limit)).allowed).toBe(true);
  });

  it("grants exactly the capacity under concurrency", async () => {
    const bucket = key();
    const limit = { capacity: 25, refillPerSecond: 0.001 };
    const others = await Promise.all([create(), create()]);
    const decisions = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 3 === 0 ? store : others[i % 2]!).take(bucket, limit),
      ),
    );
    // Redis shares one bucket across connections; each memory store is its own replica.
    const allowed = decisions.filter((d) => d.allowed).length;
    expect(allowed).toBe(store.kind === "redis" ? 25 : 60);
    await Promise.all(others.map((o) => o.close()));
  });
});

describe("redis bucket", () => {
  it("expires a bucket once it would be full again", async () => {
    const redis = new Redis(REDIS_URL);
    connections.push(redis);
    const store = new RedisBucketStore(redis, prefix);
    await store.take("ttl", { capacity: 10, refillPerSecond: 5 });
    const ttl = await redis.pttl(`${prefix}ttl`);
    // one token missing at 5/s = 200 ms, plus a second of slack
    expect(ttl).toBeGreaterThan(1_000);
    expect(ttl).toBeLessThanOrEqual(1_200);
  });

  it("reloads the script after Redis forgot it", async () => {
    const store = await redisStore();
    await store.take("flush", { capacity: 5, refillPerSecond: 1 });
    await connections.at(-1)!.script("FLUSH");
    expect((await store.take("flush", { capacity: 5, refillPerSecond: 1 })).remaining).toBe(3);
  });
});

describe("memory bucket", () => {
  it("forgets full buckets and caps how many it remembers", async () => {
    let now = 0;
    const store = new MemoryBucketStore({ now: () => now, maxBuckets: 3 });
    const limit = { capacity: 2, refillPerSecond: 1 };
    for (const name of ["a", "b", "c", "d"]) await store.take(name, limit);
    expect(store.size).toBe(3);
    now = 1_000;
    store.sweep();
    expect(store.size).toBe(0);
    await store.close();
  });

  it("never refills backwards when the clock does", async () => {
    let now = 10_000;
    const store = new MemoryBucketStore({ now: () => now });
    const limit = { capacity: 1, refillPerSecond: 1 };
    await store.take("x", limit);
    now = 5_000;
    expect((await store.take("x", limit)).allowed).toBe(false);
    await store.close();
  });
});

describe("fail-open", () => {
  it("decides on the replica-local bucket while Redis is unreachable, and counts it", async () => {
    const counters = new PolicyCounters();
    const redis = connectRedis("redis://127.0.0.1:1", { commandTimeoutMs: 200, logger });
    connections.push(redis);
    const store = new FailOpenBucketStore(
      new RedisBucketStore(redis, prefix),
      new MemoryBucketStore(),
      {
        counters,
        logger,
      },
    );
    const started = performance.now();
    const limit = { capacity: 2, refillPerSecond: 0.01 };
    const decisions = [
      await store.take("k", limit),
      await store.take("k", limit),
      await store.take("k", limit),
    ];
    expect(performance.now() - started).toBeLessThan(500);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    expect(counters.rateLimitStoreFailures).toBe(3);
    expect(await redisHealthCheck(redis)()).toBe("warn");
  });

  it("reports pass for a reachable Redis", async () => {
    const redis = connectRedis(REDIS_URL, { commandTimeoutMs: 200, logger });
    connections.push(redis);
    await waitUntilReady(redis, 5_000);
    expect(await redisHealthCheck(redis)()).toBe("pass");
  });
});
