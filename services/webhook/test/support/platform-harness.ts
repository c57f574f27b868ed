import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import {
  createBullmqBus,
  createLogger,
  createMemoryBus,
  createPool,
  type EventBus,
  type Logger,
  type Pool,
} from "@switchboard/kit";
import {
  clientCredentialsToken,
  gatewayRequester,
  createPgliteTestDatabase,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { loadGatewayConfig, startGateway, type RunningGateway } from "@switchboard/gateway";
import { ensureBootstrap } from "@switchboard/gateway/auth";
import { seedInventory, startInventory, type RunningInventory } from "@switchboard/inventory";
import { contractFetch, contractFrom } from "../../../../test/support/contract.js";
import { loadWebhookSettings, startWebhook, type RunningWebhook } from "../../src/index.js";
import { systemResolver, type Resolver } from "../../src/url-guard.js";
import { testRedisUrl } from "./harness.js";

export const PUBLIC_URL = "http://switchboard.test";

/**
 * The platform the webhook suites need, composed as startPlatform composes it (each service its
 * own pool and schema on one real PostgreSQL database, real gRPC sockets, one BullMQ queue on
 * real Redis under a random prefix — or, `embedded`, PGlite and the in-process queue): inventory (a real event producer), webhook and the
 * gateway, with a bootstrap client, a second account, and a fetch that checks every response
 * against the served OpenAPI document.
 */
export interface WebhookPlatform {
  url: string;
  accountId: string;
  gateway: RunningGateway;
  webhook: RunningWebhook;
  pools: { inventory: Pool; webhook: Pool };
  /** Test DNS: names answered here first (then the system resolver). */
  hosts: Record<string, string[]>;
  logger: Logger;
  token(scope?: string, client?: "main" | "other"): Promise<string>;
  request(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

export async function startWebhookPlatform(
  options: {
    env?: Record<string, string>;
    seed?: number;
    /** The embedded mode's stores: PGlite and the in-process queue (rate limits in process). */
    embedded?: boolean;
  } = {},
): Promise<WebhookPlatform> {
  const embedded = options.embedded === true;
  const database: TestDatabase = embedded
    ? await createPgliteTestDatabase()
    : await createRealTestDatabase("webhook_e2e");
  const logger = createLogger("webhook-e2e", { level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const prefix = `sbtest_${randomBytes(4).toString("hex")}`;
  const clients = {
    main: {
      accountId: "acct_test",
      clientId: "cli_test",
      clientSecret: `sbcs_${randomBytes(24).toString("base64url")}`,
    },
    other: {
      accountId: "acct_other",
      clientId: "cli_other",
      clientSecret: `sbcs_${randomBytes(24).toString("base64url")}`,
    },
  };
  const bullmq = embedded
    ? undefined
    : createBullmqBus({ redisUrl: testRedisUrl(), prefix, logger });
  const bus: EventBus = bullmq ?? createMemoryBus({ logger });
  const pools = {
    inventory: createPool(database.url, { name: "inventory", max: 8 }),
    webhook: createPool(database.url, { name: "webhook", max: 8 }),
  };
  const inventory: RunningInventory = await startInventory({
    pool: pools.inventory,
    bus,
    port: 0,
    host: "127.0.0.1",
    logger,
  });
  await seedInventory(pools.inventory, { count: options.seed ?? 200, seed: 9 });
  const hosts: Record<string, string[]> = {};
  const resolve: Resolver = async (host) =>
    hosts[host]
      ? hosts[host].map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
      : systemResolver(host);
  const webhook = await startWebhook({
    pool: pools.webhook,
    bus,
    port: 0,
    host: "127.0.0.1",
    logger,
    resolve,
    relayPollIntervalMs: 50,
    settings: loadWebhookSettings({
      NODE_ENV: "test",
      WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
      WEBHOOK_RETRY_SCHEDULE: "100ms,200ms",
      WEBHOOK_TIMEOUT_MS: "2000",
      ...options.env,
    }),
  });
  const gateway = await startGateway({
    config: loadGatewayConfig({
      NODE_ENV: "test",
      PORT: "0",
      HOST: "127.0.0.1",
      PUBLIC_URL,
      BOOTSTRAP_ACCOUNT: clients.main.accountId,
      BOOTSTRAP_CLIENT_ID: clients.main.clientId,
      BOOTSTRAP_CLIENT_SECRET: clients.main.clientSecret,
      REDIS_KEY_PREFIX: `${prefix}:`,
      RATE_LIMITS: "*=100000/100000",
      DATABASE_URL: database.url,
      ...(embedded ? {} : { REDIS_URL: testRedisUrl() }),
      INVENTORY_ADDR: `127.0.0.1:${inventory.port}`,
      WEBHOOK_ADDR: `127.0.0.1:${webhook.port}`,
      // Not started here: nothing listens on the discard port.
      USAGE_ADDR: "127.0.0.1:9",
      MESSAGING_ADDR: "127.0.0.1:9",
      CALL_CONTROL_ADDR: "127.0.0.1:9",
    }),
    logger,
    bus,
  });
  await ensureBootstrap(gateway.pool, { ...clients.other, accountName: "Other account" });
  const url = gateway.url;
  const checkedFetch = contractFetch(await contractFrom(url), { enforce: true });

  const platform: WebhookPlatform = {
    url,
    accountId: clients.main.accountId,
    gateway,
    webhook,
    pools,
    hosts,
    logger,
    token: (scope, client = "main") =>
      clientCredentialsToken(
        (init) => checkedFetch(`${url}/oauth/token`, init),
        { id: clients[client].clientId, secret: clients[client].clientSecret },
        scope,
      ),
    request: gatewayRequester(checkedFetch, url),
    stop: async () => {
      await gateway.stop();
      await webhook.stop();
      await inventory.stop();
      await bus.close();
      await Promise.all([pools.inventory.end(), pools.webhook.end()]);
      if (bullmq) {
        const redis = new Redis(testRedisUrl());
        try {
          const keys = await redis.keys(`${prefix}*`);
          for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
        } finally {
          redis.disconnect();
        }
      }
      await database.drop();
    },
  };
  return platform;
}
