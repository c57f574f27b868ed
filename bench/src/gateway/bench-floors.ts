import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { summarizeLatency, type Pool, RedisBucketStore } from "@switchboard/kit";
import { IdempotencyStore } from "@switchboard/gateway/policies/idempotency-store";
import { ResponseSealer } from "@switchboard/gateway/policies/response-sealing";
import { asyncCommitPool } from "@switchboard/gateway/policies/traffic-policies";

export type Floors = Record<string, { p50: number; p99: number }>;

/**
 * The round trips the policies are made of, each alone (same gap between calls as the HTTP
 * measurements): what a request with both policies cannot go below on this machine.
 */
export async function measureFloors(options: {
  pool: Pool;
  databaseUrl: string;
  redisUrl: string;
  gapMs: number;
  iterations?: number;
}): Promise<Floors> {
  const redis = new Redis(options.redisUrl);
  const fast = asyncCommitPool(options.databaseUrl);
  const bucket = new RedisBucketStore(redis, `sbbench:${process.pid}:floor:`);
  const store = (db: Pool) =>
    new IdempotencyStore(db, {
      windowSeconds: 86_400,
      leaseSeconds: 60,
      sealer: new ResponseSealer("bench-sealing-secret"),
    });
  const [durable, async_] = [store(options.pool), store(fast)];
  const fingerprint = createHash("sha256").update("floor").digest();
  await options.pool.query("CREATE TABLE IF NOT EXISTS public.commit_probe (id int PRIMARY KEY)");
  const limit = { capacity: 1_000_000, refillPerSecond: 1_000_000 };
  const replayed = await durable.claim("acct_floor", "replayed", fingerprint);
  if (replayed.kind === "claimed") {
    const response = { status: 201, mediaType: "application/json", body: '{"id":"thg_1"}' };
    await durable.complete("acct_floor", "replayed", replayed.leaseId, {
      ...response,
      headers: {},
    });
  }
  const steps: Record<string, (i: number) => Promise<unknown>> = {
    "Redis PING": () => redis.ping(),
    "token bucket script (EVALSHA)": () => bucket.take("floor", limit),
    "PostgreSQL SELECT 1": () => options.pool.query({ name: "floor-select", text: "SELECT 1" }),
    "one-row INSERT, synchronous commit (WAL flush)": (i) =>
      options.pool.query("INSERT INTO public.commit_probe VALUES ($1)", [i]),
    "key claim, synchronous commit": (i) => durable.claim("acct_floor", `sync-${i}`, fingerprint),
    "key claim, synchronous_commit=off": (i) =>
      async_.claim("acct_floor", `async-${i}`, fingerprint),
    "key claim of a completed key (replay read)": () =>
      durable.claim("acct_floor", "replayed", fingerprint),
    // As the stage sends them: the claim's statement first, the bucket script on the next tick.
    "key claim (synchronous commit) and bucket script together": (i) =>
      Promise.all([
        durable.claim("acct_floor", `both-${i}`, fingerprint),
        new Promise(process.nextTick).then(() => bucket.take("floor", limit)),
      ]),
  };
  const floors: Floors = {};
  try {
    for (const [name, step] of Object.entries(steps)) {
      const samples: number[] = [];
      for (let i = 0; i < (options.iterations ?? 1_000); i += 1) {
        if (options.gapMs > 0) await sleep(options.gapMs);
        const started = performance.now();
        await step(i);
        samples.push(performance.now() - started);
      }
      const { p50, p99 } = summarizeLatency(samples);
      floors[name] = { p50, p99 };
    }
  } finally {
    redis.disconnect();
    await fast.end();
  }
  return floors;
}
