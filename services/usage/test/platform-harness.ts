import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import {
  createClient,
  createEventBus,
  createLogger,
  createPool,
  type EventBus,
  type Logger,
  type Pool,
} from "@switchboard/kit";
import {
  clientCredentialsToken,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { loadGatewayConfig, startGateway, type RunningGateway } from "@switchboard/gateway";
import { seedInventory, startInventory, type RunningInventory } from "@switchboard/inventory";
import { usage } from "@switchboard/proto";
import { contractFetch, contractFrom } from "../../../test/support/contract.js";
import { startUsage, type RunningUsage } from "../src/index.js";
import { signingSecret, testRedisUrl } from "./harness.js";

export const PUBLIC_URL = "http://switchboard.test";

/**
 * The platform the ledger needs, composed as startPlatform composes it (each service its own
 * pool and schema on one database, real gRPC sockets, one queue on real Redis under a random
 * prefix, the gateway on that queue) — inventory, usage and the gateway only, so these suites
 * do not depend on services they do not exercise — with a bootstrap client and a fetch that
 * checks every response against the served OpenAPI document.
 */
export interface ComposedPlatform {
  gateway: RunningGateway;
  bus: EventBus;
  pools: { inventory: Pool; usage: Pool };
  services: { inventory: RunningInventory; usage: RunningUsage };
  databaseUrl: string;
  /** Stops the usage service (its consumers finish the jobs in hand first). */
  stopUsage(): Promise<void>;
  /** Starts the usage service again on its old port. */
  restartUsage(): Promise<void>;
}

export interface UsagePlatform {
  platform: ComposedPlatform;
  /** The Redis key prefix of this platform's queues. */
  busPrefix: string;
  url: string;
  accountId: string;
  clientId: string;
  clientSecret: string;
  logger: Logger;
  gatewayEnv: Record<string, string>;
  token(scope?: string, credentials?: { clientId: string; clientSecret: string }): Promise<string>;
  request(
    path: string,
    init?: RequestInit & { token?: string; json?: unknown; base?: string },
  ): Promise<Response>;
  usageClient(): usage.UsageServiceClient;
  /** The api.request rows stored for these request ids (id, count and the row). */
  storedRequests(
    requestIds: string[],
  ): Promise<Map<string, { count: number; payload: string; signature: string }>>;
  waitForRequests(requestIds: string[], timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startUsagePlatform(
  options: { env?: Record<string, string>; seed?: number } = {},
) {
  const database: TestDatabase = await createRealTestDatabase("usage_e2e");
  const logger = createLogger("usage-e2e", { level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const busPrefix = `sbtest_${randomBytes(4).toString("hex")}`;
  const accountId = "acct_test";
  const clientId = "cli_test";
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const gatewayEnv: Record<string, string> = {
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    PUBLIC_URL,
    BOOTSTRAP_ACCOUNT: accountId,
    BOOTSTRAP_CLIENT_ID: clientId,
    BOOTSTRAP_CLIENT_SECRET: clientSecret,
    REDIS_KEY_PREFIX: `${busPrefix}:`,
    RATE_LIMITS: "*=100000/100000",
    ...options.env,
  };
  const platform = await compose({
    databaseUrl: database.url,
    busPrefix,
    logger,
    gatewayEnv,
    seed: options.seed ?? 300,
  });
  const url = platform.gateway.url;
  const checkedFetch = contractFetch(await contractFrom(url), { enforce: true });
  const usagePool = platform.pools.usage;

  const storedRequests: UsagePlatform["storedRequests"] = async (requestIds) => {
    const { rows } = await usagePool.query<{
      request_id: string;
      n: number;
      payload: string;
      signature: string;
    }>(
      `SELECT request_id, count(*) OVER (PARTITION BY request_id)::int AS n, payload, signature
         FROM usage.records WHERE kind = 'api.request' AND request_id = ANY($1)`,
      [requestIds],
    );
    return new Map(
      rows.map((r) => [r.request_id, { count: r.n, payload: r.payload, signature: r.signature }]),
    );
  };

  const harness: UsagePlatform = {
    platform,
    busPrefix,
    url,
    accountId,
    clientId,
    clientSecret,
    logger,
    gatewayEnv,
    token: (scope, credentials = { clientId, clientSecret }) =>
      clientCredentialsToken(
        (init) => harness.request("/oauth/token", init),
        { id: credentials.clientId, secret: credentials.clientSecret },
        scope,
      ),
    request: (path, init = {}) => {
      const { token, json, base, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token) headers.set("Authorization", `Bearer ${token}`);
      if (json !== undefined) headers.set("Content-Type", "application/json");
      return checkedFetch(`${base ?? url}${path}`, {
        ...rest,
        headers,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    },
    usageClient: () =>
      createClient(usage.UsageServiceClient, `127.0.0.1:${platform.services.usage.port}`),
    storedRequests,
    waitForRequests: async (requestIds, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const stored = await storedRequests(requestIds);
        if (stored.size === new Set(requestIds).size) return;
        if (Date.now() > deadline) {
          const missing = requestIds.filter((id) => !stored.has(id));
          throw new Error(`${missing.length} request records missing, e.g. ${missing[0]}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    stop: async () => {
      await platform.gateway.stop();
      await platform.stopUsage();
      await platform.services.inventory.stop();
      await platform.bus.close();
      await Promise.all([platform.pools.inventory.end(), platform.pools.usage.end()]);
      const redis = new Redis(testRedisUrl());
      try {
        const keys = await redis.keys(`${busPrefix}*`);
        for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      } finally {
        redis.disconnect();
      }
      await database.drop();
    },
  };
  return harness;
}

async function compose(options: {
  databaseUrl: string;
  busPrefix: string;
  logger: Logger;
  gatewayEnv: Record<string, string>;
  seed: number;
}): Promise<ComposedPlatform> {
  const { databaseUrl, logger } = options;
  const bus = createEventBus({ redisUrl: testRedisUrl(), logger, prefix: options.busPrefix });
  const pools = {
    inventory: createPool(databaseUrl, { name: "inventory", max: 8 }),
    usage: createPool(databaseUrl, { name: "usage", max: 8 }),
  };
  const inventory = await startInventory({
    pool: pools.inventory,
    bus,
    port: 0,
    host: "127.0.0.1",
    logger,
  });
  await seedInventory(pools.inventory, { count: options.seed, seed: 5 });
  const startLedger = (port: number) =>
    startUsage({
      pool: pools.usage,
      bus,
      port,
      host: "127.0.0.1",
      logger,
      signingKeySecret: signingSecret,
    });
  let ledger: RunningUsage | undefined = await startLedger(0);
  const usagePort = ledger.port;
  const services = { inventory, usage: ledger };
  const gateway = await startGateway({
    config: loadGatewayConfig({
      ...options.gatewayEnv,
      DATABASE_URL: databaseUrl,
      REDIS_URL: testRedisUrl(),
      INVENTORY_ADDR: `127.0.0.1:${inventory.port}`,
      USAGE_ADDR: `127.0.0.1:${usagePort}`,
      // Not started here: nothing listens on the discard port.
      MESSAGING_ADDR: "127.0.0.1:9",
      CALL_CONTROL_ADDR: "127.0.0.1:9",
      WEBHOOK_ADDR: "127.0.0.1:9",
    }),
    logger,
    bus,
  });
  return {
    gateway,
    bus,
    pools,
    services,
    databaseUrl,
    stopUsage: async () => {
      const running = ledger;
      ledger = undefined;
      await running?.stop();
    },
    restartUsage: async () => {
      ledger ??= await startLedger(usagePort);
      services.usage = ledger;
    },
  };
}

/** The X-Request-Id of a response (every reply carries one). */
export function requestIdOf(response: Response): string {
  const id = response.headers.get("x-request-id");
  if (!id) throw new Error("the response has no X-Request-Id");
  return id;
}
