import { randomBytes } from "node:crypto";
import { createLogger, createPool, type Pool } from "@switchboard/kit";
import {
  createPgliteTestDatabase,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { loadGatewayConfig, startGateway, type RunningGateway } from "@switchboard/gateway";
import { seedInventory, startInventory, type RunningInventory } from "@switchboard/inventory";
import { contractFetch, contractFrom, type ContractChecker } from "./contract.js";

export type DatabaseKind = "postgres" | "pglite";

/** Redis for the rate-limit buckets in tests (TEST_REDIS_URL, default the local server). */
export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export interface TestPlatformOptions {
  database?: DatabaseKind;
  seed?: number;
  env?: Record<string, string>;
  /** Buckets in Redis (shared by the gateways of this platform) instead of in-process. */
  redis?: boolean;
  /**
   * Checks every response `request`/`fetch`/`token` receive against the served OpenAPI document:
   * `enforce` (default) throws on a violation, `record` only collects them in `contract`.
   */
  contract?: "enforce" | "record" | "off";
}

export interface TestPlatform {
  url: string;
  database: TestDatabase;
  gateway: RunningGateway;
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
  /** Starts another gateway replica on the same database (and Redis); stopped with the platform. */
  startReplica(env?: Record<string, string>): Promise<RunningGateway>;
  /** Stops the inventory backend (to test an unavailable service). */
  stopInventory(): Promise<void>;
  /** Starts the inventory backend again on its old port. */
  restartInventory(): Promise<void>;
  stop(): Promise<void>;
}

export const PUBLIC_URL = "http://switchboard.test";

/** Every bucket at 100000/100000, so only the rate-limit suites ever meet a 429. */
export const ROOMY_RATE_LIMITS = "*=100000/100000";

/**
 * Starts inventory + gateway on a fresh database (a new real PostgreSQL database, or in-memory
 * PGlite), the same way the embedded and mesh modes do, with a bootstrap client.
 */
export async function startTestPlatform(options: TestPlatformOptions = {}): Promise<TestPlatform> {
  const database =
    options.database === "pglite" ? await createPgliteTestDatabase() : await createRealTestDatabase("platform");
  const logger = createLogger("test", { level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const inventoryPool = createPool(database.url, { max: 10, name: "inventory" });
  let inventory: RunningInventory | undefined = await startInventory({
    pool: inventoryPool,
    port: 0,
    host: "127.0.0.1",
    logger,
  });
  const inventoryPort = inventory.port;
  if (options.seed) await seedInventory(inventoryPool, { count: options.seed, seed: 7 });
  const clientId = "cli_test";
  const clientSecret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const accountId = "acct_test";
  const gatewayEnv: Record<string, string> = {
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    PUBLIC_URL,
    DATABASE_URL: database.url,
    INVENTORY_ADDR: `127.0.0.1:${inventoryPort}`,
    BOOTSTRAP_ACCOUNT: accountId,
    BOOTSTRAP_CLIENT_ID: clientId,
    BOOTSTRAP_CLIENT_SECRET: clientSecret,
    // Buckets of this platform only, even on a Redis shared with other tests.
    REDIS_KEY_PREFIX: `sbtest:${randomBytes(6).toString("hex")}:`,
    ...(options.redis ? { REDIS_URL: testRedisUrl() } : {}),
    // Suites test behaviour, not limits: roomy buckets unless a suite sets its own.
    RATE_LIMITS: ROOMY_RATE_LIMITS,
    ...options.env,
  };
  const gateway = await startGateway({ config: loadGatewayConfig(gatewayEnv), logger });
  const replicas: RunningGateway[] = [];
  const url = gateway.url;

  const mode = options.contract ?? "enforce";
  const contract = mode === "off" ? undefined : await contractFrom(url);
  const checkedFetch: typeof fetch = contract
    ? contractFetch(contract, { enforce: mode === "enforce" })
    : fetch;

  const request: TestPlatform["request"] = (path, init = {}) => {
    const { token, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (token) headers.set("Authorization", `Bearer ${token}`);
    if (json !== undefined) headers.set("Content-Type", "application/json");
    return checkedFetch(`${url}${path}`, {
      ...rest,
      headers,
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
  };

  const token = async (scope?: string): Promise<string> => {
    const form = new URLSearchParams({ grant_type: "client_credentials", ...(scope ? { scope } : {}) });
    const response = await checkedFetch(`${url}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: form,
    });
    if (response.status !== 200) throw new Error(`token request failed: ${response.status}`);
    return ((await response.json()) as { access_token: string }).access_token;
  };

  return {
    url,
    database,
    gateway,
    inventoryPool,
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
      const replica = await startGateway({ config, logger });
      replicas.push(replica);
      return replica;
    },
    stopInventory: async () => {
      const running = inventory;
      inventory = undefined;
      await running?.stop();
    },
    restartInventory: async () => {
      inventory ??= await startInventory({
        pool: inventoryPool,
        port: inventoryPort,
        host: "127.0.0.1",
        logger,
      });
    },
    stop: async () => {
      for (const replica of replicas) await replica.stop();
      await gateway.stop();
      await inventory?.stop();
      await inventoryPool.end();
      await database.drop();
    },
  };
}
