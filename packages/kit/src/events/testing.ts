import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { EventBus } from "./bus.js";
import { createBullmqBus, type BullmqBus } from "./bus-bullmq.js";
import { createMemoryBus } from "./bus-memory.js";

/**
 * Test helpers for suites that must pass on both buses (as testDatabaseKinds for databases).
 * Not exported from the kit's index; kit/testing may re-export them.
 */
export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Checks that the test Redis answers; throws when it does not (tests never skip for want of it). */
export async function requireTestRedis(options: { url?: string } = {}): Promise<boolean> {
  const url = options.url ?? testRedisUrl();
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (error) {
    throw new Error(`Redis at ${url} is required by the tests`, { cause: error });
  } finally {
    client.disconnect();
  }
}

/** A queue or group name no other test uses. */
export const randomName = (label: string): string => `${label}_${randomBytes(4).toString("hex")}`;

export interface TestBus {
  bus: EventBus;
  /** Closes the bus and removes the named queues' keys (BullMQ). */
  dispose(queues?: string[]): Promise<void>;
}

export const testBusKinds = [
  {
    name: "bullmq",
    create: (): TestBus => {
      const bus: BullmqBus = createBullmqBus({ redisUrl: testRedisUrl(), prefix: "sbtest" });
      return {
        bus,
        dispose: async (queues = []) => {
          await Promise.all(queues.map((queue) => bus.obliterate(queue).catch(() => undefined)));
          await bus.close();
        },
      };
    },
  },
  {
    name: "memory",
    create: (): TestBus => {
      const bus = createMemoryBus();
      return { bus, dispose: () => bus.close() };
    },
  },
] as const;
