import { randomBytes } from "node:crypto";
import { createLogger, createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { loadGatewayConfig, startGateway, type RunningGateway } from "@switchboard/gateway";
import { seedInventory } from "@switchboard/inventory";
import { startPlatform, type RunningPlatform } from "@switchboard/platform";
import { contractFetch, contractFrom } from "../../../test/support/contract.js";
import type { RunningCallControl } from "../src/index.js";

/**
 * The whole platform (every component of platform/src/components.ts, on real sockets) on a
 * fresh real PostgreSQL database, behind a gateway whose responses are checked against its
 * own OpenAPI document, plus a second account for isolation tests. call-control reads its
 * settings from the environment at start, so `env` is applied to process.env first.
 */
export interface CallPlatform {
  url: string;
  accountId: string;
  platform: RunningPlatform;
  database: TestDatabase;
  /** A pool on the test database, for assertions on call_control tables. */
  db: Pool;
  token(scope?: string): Promise<string>;
  /** A token of another account. */
  otherToken(): Promise<string>;
  request(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  callControl(): RunningCallControl;
  /** Assigns an unused seeded number to the account (optionally to a seat); returns it. */
  assignNumber(token: string, seatId?: string): Promise<string>;
  stop(): Promise<void>;
}

export const PUBLIC_URL = "http://switchboard.test";

export async function startCallPlatform(
  options: {
    env?: Record<string, string>;
    redis?: boolean;
    seed?: number;
    contract?: boolean;
  } = {},
): Promise<CallPlatform> {
  const env = {
    SANDBOX_CALL_SECONDS: "0.5",
    SANDBOX_RING_DELAY_MS: "50",
    CALL_TIMER_POLL_MS: "100",
    ...options.env,
  };
  Object.assign(process.env, env);
  const database = await createRealTestDatabase("calls");
  const logger = createLogger("test", { level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const creds = (name: string) => ({
    account: `acct_${name}`,
    clientId: `cli_${name}`,
    secret: `sbcs_${randomBytes(24).toString("base64url")}`,
  });
  const main = creds("calls");
  const other = creds("other");
  const gatewayEnv: Record<string, string> = {
    NODE_ENV: "test",
    PORT: "0",
    HOST: "127.0.0.1",
    PUBLIC_URL,
    BOOTSTRAP_ACCOUNT: main.account,
    BOOTSTRAP_CLIENT_ID: main.clientId,
    BOOTSTRAP_CLIENT_SECRET: main.secret,
    REDIS_KEY_PREFIX: `sbtest:${randomBytes(6).toString("hex")}:`,
    RATE_LIMITS: "*=100000/100000",
    ...env,
  };
  const redisUrl = options.redis
    ? (process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379")
    : undefined;
  const platform = await startPlatform({
    databaseUrl: database.url,
    redisUrl,
    busPrefix: `sbtest-${randomBytes(4).toString("hex")}`,
    logger,
    gatewayEnv,
    beforeGateway: async (pools) => {
      await seedInventory(pools.inventory!, { count: options.seed ?? 400, seed: 5 });
    },
  });
  // A replica bootstrapping a second account: its tokens verify at every gateway.
  const replica: RunningGateway = await startGateway({
    config: loadGatewayConfig({
      ...gatewayEnv,
      DATABASE_URL: database.url,
      ...Object.fromEntries(
        Object.entries(platform.services).map(([name, s]) => [
          `${name.toUpperCase().replace(/-/g, "_")}_ADDR`,
          `127.0.0.1:${s.port}`,
        ]),
      ),
      BOOTSTRAP_ACCOUNT: other.account,
      BOOTSTRAP_CLIENT_ID: other.clientId,
      BOOTSTRAP_CLIENT_SECRET: other.secret,
    }),
    logger,
  });
  const url = platform.gateway.url;
  const checked =
    options.contract === false ? fetch : contractFetch(await contractFrom(url), { enforce: true });
  const db = createPool(database.url, { max: 4, name: "calls-test" });

  const tokenFor = async (who: typeof main, scope?: string) => {
    const response = await checked(`${url}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${Buffer.from(`${who.clientId}:${who.secret}`).toString("base64")}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "client_credentials", ...(scope ? { scope } : {}) }),
    });
    if (response.status !== 200) throw new Error(`token request failed: ${response.status}`);
    return ((await response.json()) as { access_token: string }).access_token;
  };
  const request: CallPlatform["request"] = (path, init = {}) => {
    const { token, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (token) headers.set("Authorization", `Bearer ${token}`);
    if (json !== undefined) headers.set("Content-Type", "application/json");
    return checked(`${url}${path}`, {
      ...rest,
      headers,
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
  };

  let available: string[] = [];
  const assignNumber = async (token: string, seatId?: string) => {
    if (available.length === 0) {
      const search = await request(
        "/v1/api/numbers/search?country=US&capabilities=voice&limit=200",
        { token },
      );
      available = ((await search.json()) as { data: { number: string }[] }).data.map(
        (n) => n.number,
      );
    }
    const number = available.shift();
    if (!number) throw new Error("no seeded number left");
    const held = await request("/v1/api/numbers/hold", { method: "POST", token, json: { number } });
    if (held.status !== 201) throw new Error(`hold failed: ${held.status} ${await held.text()}`);
    const { id } = (await held.json()) as { id: string };
    const assigned = await request(`/v1/api/numbers/holds/${id}/assign`, {
      method: "POST",
      token,
      json: seatId ? { seat_id: seatId } : {},
    });
    if (assigned.status !== 200) throw new Error(`assign failed: ${assigned.status}`);
    return number;
  };

  return {
    url,
    accountId: main.account,
    platform,
    database,
    db,
    token: (scope) => tokenFor(main, scope),
    otherToken: () => tokenFor(other),
    request,
    callControl: () => platform.services["call-control"] as unknown as RunningCallControl,
    assignNumber,
    stop: async () => {
      await replica.stop();
      await platform.stop();
      await db.end();
      await database.drop();
    },
  };
}

/** Polls `read` until `done` holds (or the deadline passes, returning the last value). */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
