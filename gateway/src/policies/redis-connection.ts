import { Redis } from "ioredis";
import type { Logger } from "@switchboard/kit";
import type { CheckState } from "../health.js";

/**
 * A Redis connection for the request path: a command never waits for a connection (no offline
 * queue) and never longer than `commandTimeoutMs`, so an unreachable or stalled Redis turns
 * into a fast error the caller can fail open on. Reconnects forever in the background.
 */
export function connectRedis(
  url: string,
  options: { commandTimeoutMs: number; logger: Logger },
): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    lazyConnect: false,
  });
  let down = false;
  // Connection errors arrive here on every retry: log the transitions, not each attempt.
  redis.on("error", () => {
    if (down) return;
    down = true;
    options.logger.warn("redis unreachable; rate limits fall back to this replica");
  });
  redis.on("ready", () => {
    if (down) options.logger.info("redis reachable again");
    down = false;
  });
  return redis;
}

/** Resolves once the connection is ready, or after `timeoutMs` (the caller fails open). */
export function waitUntilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref();
    redis.on("ready", onReady);
  });
}

/** The `redis` health check: pass when a PING answers within a second, else warn. */
export function redisHealthCheck(redis: Redis): () => Promise<CheckState> {
  return async () => {
    if (redis.status !== "ready") return "warn";
    const timeout = new Promise<CheckState>((resolve) =>
      setTimeout(() => resolve("warn"), 1_000).unref(),
    );
    const ping = redis.ping().then(
      (answer): CheckState => (answer === "PONG" ? "pass" : "warn"),
      (): CheckState => "warn",
    );
    return Promise.race([ping, timeout]);
  };
}

/** Closes without waiting for a server that may be gone. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === "end") return;
  await redis.quit().catch(() => redis.disconnect());
}
