import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningGateway } from "@switchboard/gateway";
import { createAccount, createServiceToken } from "../src/admin/index.js";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

/**
 * Per-permission token buckets through the whole gateway, on Redis (shared by replicas) and on
 * the in-process store of the embedded mode. Each test uses its own account, and its own client
 * address (X-Forwarded-For from loopback, TRUST_PROXY=loopback) for the `public` bucket.
 */
describe.each([
  { name: "redis", redis: true },
  { name: "in-process", redis: false },
])("rate limits on $name", ({ redis }) => {
  let platform: TestPlatform;
  let numbers: string[];
  let address = 0;
  const nextAddress = () => `198.51.100.${(address += 1)}`;

  /** A fresh account with a service token: its own buckets. */
  const caller = async (scopes: string[]) => {
    const account = await createAccount(platform.gateway.pool, { name: "rate limits" });
    const { token } = await createServiceToken(platform.gateway.pool, {
      accountId: account.id,
      scopes,
    });
    return { accountId: account.id, token };
  };

  const call = (
    path: string,
    init: {
      token?: string;
      from?: string;
      method?: string;
      json?: unknown;
      on?: RunningGateway;
    } = {},
  ) => {
    const headers: Record<string, string> = { "X-Forwarded-For": init.from ?? "192.0.2.1" };
    if (init.token) headers.Authorization = `Bearer ${init.token}`;
    if (init.json !== undefined) headers["Content-Type"] = "application/json";
    return platform.fetch(`${init.on?.url ?? platform.url}${path}`, {
      method: init.method ?? "GET",
      headers,
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
  };

  const expectRateLimitHeaders = (response: Response, resource: string, capacity: number) => {
    const header = (name: string) => response.headers.get(name);
    expect(header("x-ratelimit-resource"), `${response.url} → ${response.status}`).toBe(resource);
    expect(header("x-ratelimit-limit")).toBe(String(capacity));
    const remaining = Number(header("x-ratelimit-remaining"));
    const reset = Number(header("x-ratelimit-reset"));
    expect(Number.isInteger(remaining) && remaining >= 0 && remaining <= capacity).toBe(true);
    expect(Number.isInteger(reset) && reset >= 0).toBe(true);
    expect(header("ratelimit-policy")).toMatch(new RegExp(`^"${resource}";q=${capacity};w=\\d+$`));
    expect(header("ratelimit")).toBe(`"${resource}";r=${remaining};t=${reset}`);
  };

  const holdsOf = async (number: string) => {
    const { rows } = await platform.inventoryPool.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM inventory.holds WHERE e164 = $1",
      [number],
    );
    return rows[0]!.count;
  };

  beforeAll(async () => {
    platform = await startTestPlatform({
      database: "postgres",
      seed: 300,
      redis,
      env: { RATE_LIMITS: "*=1000/1000,numbers:write=3/1,public=20/1", TRUST_PROXY: "loopback" },
    });
    const { token } = await caller(["numbers:read"]);
    const page = await call("/v1/api/numbers/search?limit=20", { token });
    numbers = ((await page.json()) as { data: { number: string }[] }).data.map((n) => n.number);
  });
  afterAll(async () => platform?.stop());

  it("puts the rate-limit fields on every kind of reply", async () => {
    const { token } = await caller(["numbers:read", "numbers:write"]);
    const { token: readOnly } = await caller(["numbers:read"]);
    const from = nextAddress();
    const deadBackend = await platform.startReplica({
      INVENTORY_ADDR: "127.0.0.1:1",
      GRPC_DEADLINE_MS: "1000",
    });
    const cases: [Promise<Response>, number, string, number][] = [
      [call("/v1/api/numbers/search?limit=1", { token }), 200, "numbers:read", 1000],
      [
        call("/v1/api/numbers/hold", { token, method: "POST", json: { number: numbers[0] } }),
        201,
        "numbers:write",
        3,
      ],
      [call("/v1/api/numbers/hold", { token, method: "POST", json: {} }), 422, "numbers:write", 3],
      [call("/v1/api/numbers/holds/hld_nope", { token }), 404, "numbers:read", 1000],
      [call("/v1/api/numbers/search", { token: "not-a-token", from }), 401, "public", 20],
      [call("/v1/api/numbers/search", { from }), 401, "public", 20],
      [
        call("/v1/api/numbers/hold", { token: readOnly, from, method: "POST", json: {} }),
        403,
        "public",
        20,
      ],
      [call("/v1/api/nothing-here", { token, from }), 404, "public", 20],
      [call("/v1/api/numbers/search", { token, from, method: "DELETE" }), 405, "public", 20],
      [call("/v7/api/health", { from }), 404, "public", 20],
      [call("/v1/api/numbers/search", { token, on: deadBackend }), 503, "numbers:read", 1000],
      [call("/api/health", { from }), 200, "public", 20],
      [call("/v1/openapi.json", { from }), 200, "public", 20],
    ];
    for (const [pending, status, resource, capacity] of cases) {
      const response = await pending;
      expect(response.status, response.url).toBe(status);
      expectRateLimitHeaders(response, resource, capacity);
    }
  });

  it("answers 429 with Retry-After past capacity without executing, and serves again after refill", async () => {
    const { token } = await caller(["numbers:write"]);
    const hold = (number: string) =>
      call("/v1/api/numbers/hold", { token, method: "POST", json: { number } });
    const [a, b, c, d] = numbers.slice(5, 9) as [string, string, string, string];
    const burst = [await hold(a), await hold(b), await hold(c)];
    expect(burst.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(burst.map((r) => r.headers.get("x-ratelimit-remaining"))).toEqual(["2", "1", "0"]);

    const limited = await hold(d);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(((await limited.json()) as { type: string }).type).toMatch(/\/rate-limited$/);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBe(1);
    expectRateLimitHeaders(limited, "numbers:write", 3);
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(await holdsOf(d)).toBe(0);

    await sleep(retryAfter * 1000 + 100);
    const restored = await hold(d);
    expect(restored.status).toBe(201);
    expect(await holdsOf(d)).toBe(1);
  });

  it("limits a flood of failed authentications per client address", async () => {
    const flood = nextAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 24; i += 1) {
      statuses.push(
        (await call("/v1/api/numbers/search", { token: `bad-${i}`, from: flood })).status,
      );
    }
    const firstLimited = statuses.indexOf(429);
    expect(firstLimited).toBeGreaterThanOrEqual(20);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    const limited = await call("/v1/api/numbers/search", { from: flood });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expectRateLimitHeaders(limited, "public", 20);

    // Unknown routes from there are limited too; a valid credential from there and other
    // addresses are not affected.
    expect((await call("/v1/api/nowhere", { from: flood })).status).toBe(429);
    const { token } = await caller(["numbers:read"]);
    expect((await call("/v1/api/numbers/search?limit=1", { token, from: flood })).status).toBe(200);
    expect((await call("/v1/api/numbers/search", { from: nextAddress() })).status).toBe(401);
  });

  it(
    redis
      ? "shares one bucket between two gateway replicas"
      : "keeps one bucket per replica in-process",
    async () => {
      const replica = await platform.startReplica();
      const { token } = await caller(["numbers:write"]);
      const attempt = (on?: RunningGateway) =>
        call("/v1/api/numbers/hold", { token, method: "POST", json: {}, ...(on ? { on } : {}) });
      const first = await attempt();
      const second = await attempt(replica);
      const third = await attempt();
      const fourth = await attempt(replica);
      expect([first, second, third].map((r) => r.status)).toEqual([422, 422, 422]);
      if (redis) {
        expect([first, second, third].map((r) => r.headers.get("x-ratelimit-remaining"))).toEqual([
          "2",
          "1",
          "0",
        ]);
        expect(fourth.status).toBe(429);
      } else {
        expect([first, second, third].map((r) => r.headers.get("x-ratelimit-remaining"))).toEqual([
          "2",
          "2",
          "1",
        ]);
        expect(fourth.status).toBe(422);
      }
    },
  );

  const unreachableRedis = async () => {
    const replica = await platform.startReplica({ REDIS_URL: "redis://127.0.0.1:1" });
    const { token } = await caller(["numbers:read"]);
    const response = await call("/v1/api/numbers/search?limit=1", { token, on: replica });
    expect(response.status).toBe(200);
    expectRateLimitHeaders(response, "numbers:read", 1000);
    expect(replica.policies.counters.rateLimitStoreFailures).toBeGreaterThan(0);

    const health = await call("/api/health", { on: replica, from: nextAddress() });
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: "warn",
      checks: { redis: "warn", gateway: "pass" },
    });
    const healthy = await call("/api/health", { from: nextAddress() });
    expect(await healthy.json()).toMatchObject({ checks: { redis: "pass" } });
  };

  const embedded = async () => {
    const health = (await (await call("/api/health", { from: nextAddress() })).json()) as {
      checks: Record<string, string>;
    };
    expect(health.checks.redis).toBeUndefined();
    expect(platform.gateway.policies.bucketStore.kind).toBe("memory");
  };

  it(
    redis
      ? "keeps serving when Redis is unreachable, counts it and reports redis: warn"
      : "has no redis component to report in the embedded mode",
    () => (redis ? unreachableRedis() : embedded()),
  );
});
