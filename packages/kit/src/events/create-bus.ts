import type { Logger } from "pino";
import type { EventBus } from "./bus.js";
import { createBullmqBus } from "./bus-bullmq.js";
import { createMemoryBus } from "./bus-memory.js";

/**
 * The run-mode switch of docs/architecture.md: BullMQ on Redis when `redisUrl` (REDIS_URL) is set
 * (mesh), the in-process bus otherwise (embedded). In the embedded mode every service in the
 * process must share the one bus this returns.
 */
export function createEventBus(options: {
  redisUrl?: string | undefined;
  logger?: Logger;
  prefix?: string;
  stalledIntervalMs?: number;
  lockDurationMs?: number;
}): EventBus {
  const { redisUrl, logger, prefix, stalledIntervalMs, lockDurationMs } = options;
  if (redisUrl) {
    return createBullmqBus({
      redisUrl,
      ...(logger ? { logger } : {}),
      ...(prefix ? { prefix } : {}),
      ...(stalledIntervalMs ? { stalledIntervalMs } : {}),
      ...(lockDurationMs ? { lockDurationMs } : {}),
    });
  }
  return createMemoryBus(logger ? { logger } : {});
}
