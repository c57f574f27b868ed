import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createLogger, type Pool } from "@switchboard/kit";
import {
  clientCredentialsToken,
  gatewayRequester,
  createPgliteTestDatabase,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { seedInventory } from "@switchboard/inventory";
import { startPlatform, type RunningPlatform } from "@switchboard/platform";
import { ensureBootstrap } from "../../../gateway/src/admin/index.js";
import {
  contractFetch,
  contractFrom,
  type ContractChecker,
} from "../../../test/support/contract.js";
import type { RunningMessaging } from "../src/server.js";

/**
 * The whole platform (every component of platform/src/components.ts, as the embedded mode and
 * the mesh start them) on a fresh PostgreSQL database and the real Redis, with the messaging
 * timers compressed. Every response is checked against the served OpenAPI document.
 */
export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Compressed timers: receipts after 40 ms, retries from 30 ms, a roomy sender pace. */
export const fastMessagingEnv: Record<string, string> = {
  SANDBOX_RECEIPT_DELAY_MS: "40",
  MESSAGING_RETRY_BASE_MS: "30",
  MESSAGING_RETRY_MAX_MS: "300",
  MESSAGING_SEND_ATTEMPTS: "5",
  MESSAGING_SENDER_RATE: "500",
  MESSAGING_RELAY_POLL_MS: "20",
  MESSAGING_SWEEP_INTERVAL_MS: "60000",
  MESSAGING_NUMBER_CACHE_MS: "0",
};

export interface MessagingPlatform {
  url: string;
  platform: RunningPlatform;
  database: TestDatabase;
  pool: Pool;
  accountId: string;
  contract: ContractChecker;
  /** The running messaging service (its context: pool, carrier, outbox…). */
  messaging: RunningMessaging;
  token(scope?: string, client?: { id: string; secret: string }): Promise<string>;
  /** A token of another account (created on first use). */
  otherAccountToken(): Promise<string>;
  request(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

export async function startMessagingPlatform(
  options: {
    env?: Record<string, string>;
    seed?: number;
    /** The embedded mode: PGlite and the in-process bus instead of PostgreSQL and Redis. */
    embedded?: boolean;
  } = {},
) {
  const serviceEnv = { ...process.env, NODE_ENV: "test", ...fastMessagingEnv, ...options.env };
  const database = options.embedded
    ? await createPgliteTestDatabase()
    : await createRealTestDatabase("messaging");
  const logger = createLogger("test", { level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const busPrefix = `sbmsg${randomBytes(4).toString("hex")}`;
  const clientId = "cli_msgtest";
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const accountId = "acct_msgtest";
  const platform = await startPlatform({
    databaseUrl: database.url,
    ...(options.embedded ? {} : { redisUrl: testRedisUrl() }),
    busPrefix,
    logger,
    serviceEnv,
    gatewayEnv: {
      NODE_ENV: "test",
      PORT: "0",
      HOST: "127.0.0.1",
      PUBLIC_URL: "http://switchboard.test",
      BOOTSTRAP_ACCOUNT: accountId,
      BOOTSTRAP_CLIENT_ID: clientId,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      REDIS_KEY_PREFIX: `${busPrefix}:rl:`,
      ...(options.embedded ? { REDIS_URL: "" } : {}),
      RATE_LIMITS: "*=100000/100000",
    },
    beforeGateway: async (pools) => {
      await seedInventory(pools.inventory as Pool, { count: options.seed ?? 1_500, seed: 11 });
    },
  });
  const url = platform.gateway.url;
  const contract = await contractFrom(url);
  const checked = contractFetch(contract, { enforce: true });
  const request: MessagingPlatform["request"] = gatewayRequester(checked, url);
  const token: MessagingPlatform["token"] = (
    scope,
    client = { id: clientId, secret: clientSecret },
  ) => clientCredentialsToken((init) => checked(`${url}/oauth/token`, init), client, scope);
  const other = { id: "cli_msgother", secret: `sbcs_${randomBytes(24).toString("base64url")}` };
  let otherReady: Promise<unknown> | undefined;
  return {
    url,
    platform,
    messaging: platform.services.messaging!.instance as RunningMessaging,
    database,
    pool: platform.pools.messaging as Pool,
    accountId,
    contract,
    token,
    otherAccountToken: async () => {
      otherReady ??= ensureBootstrap(platform.gateway.pool, {
        accountId: "acct_msgother",
        clientId: other.id,
        clientSecret: other.secret,
      });
      await otherReady;
      return token(undefined, other);
    },
    request,
    stop: async () => {
      await platform.stop();
      await database.drop();
      if (!options.embedded) await deleteKeys(busPrefix);
    },
  } satisfies MessagingPlatform;
}

/** Removes the Redis keys of one test platform (its queues and buckets). */
async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(testRedisUrl());
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
