import type { ErrorRequestHandler, RequestHandler } from "express";
import {
  createPool,
  type Logger,
  type Pool,
  type BucketStore,
  MemoryBucketStore,
  RedisBucketStore,
} from "@switchboard/kit";
import type { ExtraCheck } from "../health.js";
import type { Stage } from "../http/pipeline.js";
import { FailOpenBucketStore } from "./fail-open-bucket-store.js";
import { schedulePurge } from "./idempotency-purge.js";
import { createIdempotencyLayer } from "./idempotency-stage.js";
import { IdempotencyStore } from "./idempotency-store.js";
import { ResponseSealer } from "./response-sealing.js";
import { PolicyCounters } from "./policy-counters.js";
import type { RateLimitTable } from "./rate-limit-config.js";
import { createRateLimiter } from "./rate-limit-stage.js";
import { closeRedis, connectRedis, redisHealthCheck, waitUntilReady } from "./redis-connection.js";

export interface PolicyConfig {
  /** Unset: buckets live in this process (embedded mode). */
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  redisCommandTimeoutMs: number;
  rateLimits: RateLimitTable;
  idempotencyWaitMs: number;
  idempotencyLeaseSeconds: number;
  idempotencyPurgeIntervalSeconds: number;
  /**
   * `false` (default): a key's claim commits without waiting for its WAL flush. The keyed
   * operation's effects commit later in the same WAL (one PostgreSQL cluster) with synchronous
   * commit, and a flush writes everything before it, so no effect is ever durable while its
   * key's claim is not. Completions always wait for the flush. `true`: claims wait too (for a
   * gateway database on another cluster than the services').
   */
  idempotencySynchronousCommit: boolean;
}

/** The Idempotency-Key window of docs/api.md. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

export interface TrafficPolicies {
  /**
   * The stage that follows authentication: the rate limit, then idempotency, as one stage whose
   * bucket check and key claim go out together (the bucket still decides first).
   */
  stage: Stage;
  /** Error middleware before the problem mapper (rate-limits requests that never reached a stage). */
  errorHandlers: ErrorRequestHandler[];
  /** The rate limit of pages outside the route table (the client address's bucket). */
  pageLimit: RequestHandler;
  /** Health checks (`redis` when Redis is configured). */
  checks: Record<string, ExtraCheck>;
  counters: PolicyCounters;
  bucketStore: BucketStore;
  idempotencyStore: IdempotencyStore;
  /** Resolves once the responses being stored (and keys being freed) after their replies are written. */
  settled(): Promise<void>;
  /** Shutting down: requests waiting for a key held elsewhere answer 503 now. */
  stopWaiting(): void;
  close(): Promise<void>;
}

/** Builds the gateway's traffic policies: per-permission token buckets and the Idempotency-Key store. */
export async function createTrafficPolicies(options: {
  config: PolicyConfig;
  /** The gateway's pool, for the Idempotency-Key store with synchronous commit. */
  pool: Pool;
  /** For the pool of deferred claim commits. */
  databaseUrl?: string;
  /** That pool's statement deadline (the gateway's DATABASE_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs?: number;
  /** `pool` is a real PostgreSQL server (kit's preparedStatementSupport), not PGlite. */
  namedStatements: boolean;
  logger: Logger;
  errorsUrl: string;
  /** SIGNING_KEY_SECRET: seals the stored idempotent responses at rest. */
  sealingSecret: string;
}): Promise<TrafficPolicies> {
  const { config, logger } = options;
  const counters = new PolicyCounters();
  const redis = config.redisUrl
    ? connectRedis(config.redisUrl, { commandTimeoutMs: config.redisCommandTimeoutMs, logger })
    : undefined;
  if (redis && !(await waitUntilReady(redis, 2_000))) {
    logger.warn("redis not ready at start; rate limits use the replica-local bucket until it is");
  }
  const bucketStore: BucketStore = redis
    ? new FailOpenBucketStore(
        new RedisBucketStore(redis, config.redisKeyPrefix),
        new MemoryBucketStore(),
        {
          counters,
          logger,
        },
      )
    : new MemoryBucketStore();
  const rateLimiter = createRateLimiter({
    store: bucketStore,
    limits: config.rateLimits,
    counters,
  });

  // PGlite (embedded mode) shares one session between connections: no named statements, and
  // no session settings of our own; its commits are local anyway.
  const asyncPool =
    config.idempotencySynchronousCommit || !options.databaseUrl || !options.namedStatements
      ? undefined
      : asyncCommitPool(options.databaseUrl, options.statementTimeoutMs);
  const idempotencyStore = new IdempotencyStore(
    options.pool,
    {
      windowSeconds: IDEMPOTENCY_WINDOW_SECONDS,
      leaseSeconds: config.idempotencyLeaseSeconds,
      sealer: new ResponseSealer(options.sealingSecret),
    },
    asyncPool,
  );
  const stopPurge = schedulePurge(idempotencyStore, {
    intervalSeconds: config.idempotencyPurgeIntervalSeconds,
    logger,
  });

  const idempotency = createIdempotencyLayer({
    store: idempotencyStore,
    counters,
    logger,
    errorsUrl: options.errorsUrl,
    waitMs: config.idempotencyWaitMs,
    admit: rateLimiter.admit,
  });

  return {
    stage: idempotency.stage,
    errorHandlers: [rateLimiter.unrouted],
    pageLimit: rateLimiter.page,
    checks: redis ? { redis: redisHealthCheck(redis) } : {},
    counters,
    bucketStore,
    idempotencyStore,
    settled: () => idempotency.drain(),
    stopWaiting: () => idempotency.stopWaiting(),
    close: async () => {
      stopPurge();
      await idempotency.close();
      await bucketStore.close();
      if (redis) await closeRedis(redis);
      await asyncPool?.end();
    },
  };
}

/** Connections whose commits do not wait for the WAL flush (`synchronous_commit = off`). */
export function asyncCommitPool(databaseUrl: string, statementTimeoutMs?: number): Pool {
  const url = new URL(databaseUrl);
  url.searchParams.set("options", "-c synchronous_commit=off");
  return createPool(url.toString(), {
    name: "gateway-idempotency",
    max: 10,
    ...(statementTimeoutMs ? { statementTimeoutMs } : {}),
  });
}
