import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import {
  createLogger,
  type EventBus,
  type Logger,
  type Pool,
  type RunningAdminServer,
} from "@switchboard/kit";
import {
  clientCredentialsToken,
  gatewayRequester,
  createPgliteTestDatabase,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { loadGatewayConfig, startGateway, type RunningGateway } from "@switchboard/gateway";
import { seedInventory } from "@switchboard/inventory";
import type { ComponentDeps, RunningComponent } from "@switchboard/kit";
import { startPlatform, type RunningPlatform } from "@switchboard/platform";
import { contractFetch, contractFrom, type ContractChecker } from "./contract.js";

export type DatabaseKind = "postgres" | "pglite";

/** Redis for the rate-limit buckets in tests (TEST_REDIS_URL, default the local server). */
export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Starts one service in place of the platform's own (e.g. with a test DNS resolver). */
export type ComponentStarter = (
  deps: Omit<ComponentDeps, "addresses" | "ownProcess"> & { env: NodeJS.ProcessEnv },
) => Promise<RunningComponent>;

export interface TestPlatformOptions {
  database?: DatabaseKind;
  /** Seeds the inventory with this many numbers before the gateway starts. */
  seed?: number;
  /** The gateway's environment on top of the test defaults. */
  env?: Record<string, string>;
  /** The services' environment on top of process.env (e.g. compressed sandbox timers). */
  serviceEnv?: Record<string, string>;
  /**
   * Redis for the rate-limit buckets (shared by the gateways of this platform) and BullMQ for
   * the event bus, instead of the in-process stores.
   */
  redis?: boolean;
  /**
   * Checks every response `request`/`fetch`/`token` receive against the served OpenAPI document:
   * `enforce` (default) throws on a violation, `record` only collects them in `contract`.
   */
  contract?: "enforce" | "record" | "off";
  /** The platform's logger (default: the silent test logger, TEST_LOG_LEVEL to hear it). */
  logger?: Logger;
  /** Serve the admin port (/metrics, /livez, /readyz) on a free loopback port. */
  admin?: boolean;
  /** The database URL the platform connects with (e.g. through a proxy a test can cut). */
  connectThrough?: (databaseUrl: string) => string;
  /**
   * Services started by the test instead of the platform, on the same pool, bus and port (the
   * platform's own instance is stopped first). `restartService` does not apply to them.
   */
  replace?: Record<string, ComponentStarter>;
}

export interface TestPlatform {
  url: string;
  database: TestDatabase;
  gateway: RunningGateway;
  /** Every service, as the embedded mode runs them (platform/src/components.ts). */
  platform: RunningPlatform;
  /** Each service's pool, by component name (`inventory`, `call-control`, …). */
  pools: Record<string, Pool>;
  bus: EventBus;
  /** The Redis key prefix of this platform's queues (with `redis: true`). */
  busPrefix: string;
  logger: Logger;
  /** The admin server (with `admin: true`). */
  admin: RunningAdminServer | undefined;
  inventoryPool: Pool;
  clientId: string;
  clientSecret: string;
  accountId: string;
  /** An access token for the bootstrap client (every scope unless `scope` narrows it). */
  token(scope?: string): Promise<string>;
  /** fetch against the gateway with an optional bearer token. */
  request(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  /** fetch, checked against the OpenAPI document like `request` (for clients such as openid-client). */
  fetch: typeof fetch;
  /** The OpenAPI checker, or undefined with `contract: "off"`. */
  contract: ContractChecker | undefined;
  /** The environment the gateway was configured with (for starting more replicas). */
  gatewayEnv: Record<string, string>;
  /**
   * Starts another gateway replica on the same database (and Redis) with `env` on top of the
   * gateway's; stopped with the platform unless the suite stops it first.
   */
  startReplica(env?: Record<string, string>): Promise<RunningGateway>;
  /** Stops one backend service (to test an unavailable service). */
  stopService(name: string): Promise<void>;
  /** Starts a stopped backend service again on its old port. */
  restartService(name: string): Promise<void>;
  stopInventory(): Promise<void>;
  restartInventory(): Promise<void>;
  stop(): Promise<void>;
}

export const PUBLIC_URL = "http://switchboard.test";

/** Every bucket at 100000/100000, so only the rate-limit suites ever meet a 429. */
export const ROOMY_RATE_LIMITS = "*=100000/100000";

/**
 * Starts every service and the gateway on a fresh database (a new real PostgreSQL database, or
 * in-memory PGlite) through the same composition as the embedded mode, with a bootstrap client.
 */
export async function startTestPlatform(options: TestPlatformOptions = {}): Promise<TestPlatform> {
  const database =
    options.database === "pglite"
      ? await createPgliteTestDatabase()
      : await createRealTestDatabase("platform");
  const logger =
    options.logger ??
    createLogger("test", {
      level: process.env.TEST_LOG_LEVEL ?? (process.env.LOG_CAPTURE_DIR ? "debug" : "silent"),
    });
  const clientId = "cli_test";
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const accountId = "acct_test";
  const isolation = randomBytes(6).toString("hex");
  const busPrefix = `sbtest-${isolation}`;
  const serviceEnv = { ...process.env, NODE_ENV: "test", PUBLIC_URL, ...options.serviceEnv };
  const platform = await startPlatform({
    databaseUrl: options.connectThrough?.(database.url) ?? database.url,
    redisUrl: options.redis ? testRedisUrl() : undefined,
    busPrefix,
    logger,
    ...(options.admin ? { admin: { port: 0 } } : {}),
    serviceEnv,
    gatewayEnv: {
      NODE_ENV: "test",
      PORT: "0",
      HOST: "127.0.0.1",
      PUBLIC_URL,
      BOOTSTRAP_ACCOUNT: accountId,
      BOOTSTRAP_CLIENT_ID: clientId,
      BOOTSTRAP_CLIENT_SECRET: clientSecret,
      // Buckets of this platform only, even on a Redis shared with other tests.
      REDIS_KEY_PREFIX: `sbtest:${isolation}:`,
      // Suites test behaviour, not limits: roomy buckets unless a suite sets its own.
      RATE_LIMITS: ROOMY_RATE_LIMITS,
      ...options.env,
    },
    beforeGateway: async (pools) => {
      if (options.seed) await seedInventory(pools.inventory!, { count: options.seed, seed: 7 });
    },
  });
  const replacements: RunningComponent[] = [];
  for (const [name, start] of Object.entries(options.replace ?? {})) {
    const { port } = platform.services[name]!;
    await platform.stopService(name);
    const replacement = await start({
      pool: platform.pools[name]!,
      bus: platform.bus,
      logger,
      host: "127.0.0.1",
      port,
      env: serviceEnv,
      ...(options.redis ? { redis: { url: testRedisUrl(), prefix: busPrefix } } : {}),
    });
    platform.services[name] = replacement;
    replacements.push(replacement);
  }
  const gateway = platform.gateway;
  const gatewayEnv = Object.fromEntries(
    Object.entries(platform.gatewayEnv).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  const replicas: RunningGateway[] = [];
  const url = gateway.url;

  const mode = options.contract ?? "enforce";
  const contract = mode === "off" ? undefined : await contractFrom(url);
  const checkedFetch: typeof fetch = contract
    ? contractFetch(contract, { enforce: mode === "enforce" })
    : fetch;

  const request: TestPlatform["request"] = gatewayRequester(checkedFetch, url);

  const token = (scope?: string): Promise<string> =>
    clientCredentialsToken(
      (init) => checkedFetch(`${url}/oauth/token`, init),
      { id: clientId, secret: clientSecret },
      scope,
    );

  return {
    url,
    database,
    gateway,
    platform,
    pools: platform.pools,
    bus: platform.bus,
    busPrefix,
    logger,
    admin: platform.admin,
    inventoryPool: platform.pools.inventory!,
    clientId,
    clientSecret,
    accountId,
    token,
    request,
    fetch: checkedFetch,
    contract,
    gatewayEnv,
    startReplica: async (env = {}) => {
      const config = loadGatewayConfig({ ...gatewayEnv, ...env });
      const replica = await startGateway({ config, logger, bus: platform.bus });
      let stopped: Promise<void> | undefined;
      // A suite may stop its replica itself; the platform's stop then leaves it be.
      const tracked = { ...replica, stop: () => (stopped ??= replica.stop()) };
      replicas.push(tracked);
      return tracked;
    },
    stopService: (name) => platform.stopService(name),
    restartService: (name) => platform.restartService(name),
    stopInventory: () => platform.stopService("inventory"),
    restartInventory: () => platform.restartService("inventory"),
    stop: async () => {
      for (const replica of replicas) await replica.stop();
      for (const replacement of replacements) await replacement.stop();
      await platform.stop();
      await database.drop();
      if (options.redis) await deleteRedisKeys([`${busPrefix}*`, `sbtest:${isolation}:*`]);
    },
  };
}

/** Removes the Redis keys of one test platform (its queues and buckets). */
async function deleteRedisKeys(patterns: string[]): Promise<void> {
  const redis = new Redis(testRedisUrl());
  try {
    for (const pattern of patterns) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
}
