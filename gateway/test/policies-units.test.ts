import { describe, expect, it, vi } from "vitest";
import { createLogger, DomainError, decisionFor } from "@switchboard/kit";
import { loadGatewayConfig } from "../src/config.js";
import { addressPartition } from "../src/policies/client-address.js";
import { requestFingerprint } from "../src/policies/fingerprint.js";
import { parseIdempotencyKey } from "../src/policies/idempotency-key.js";
import { schedulePurge } from "../src/policies/idempotency-purge.js";
import type { IdempotencyStore } from "../src/policies/idempotency-store.js";
import {
  isKeptStatus,
  replayOf,
  storedFromProblem,
  storedFromReply,
} from "../src/policies/idempotency-replies.js";
import {
  defaultRateLimits,
  parseRateLimits,
  windowSeconds,
} from "../src/policies/rate-limit-config.js";
import { rateLimitHeaders } from "../src/policies/rate-limit-headers.js";
import { unreachableBackends } from "@switchboard/test-support/grpc";

describe("RATE_LIMITS", () => {
  it("overrides the defaults per permission and keeps the others", () => {
    const table = parseRateLimits("calls:write=20/10, numbers:read=100/50,public=5/0.5");
    expect(table["calls:write"]).toEqual({ capacity: 20, refillPerSecond: 10 });
    expect(table["numbers:read"]).toEqual({ capacity: 100, refillPerSecond: 50 });
    expect(table.public).toEqual({ capacity: 5, refillPerSecond: 0.5 });
    expect(table["messages:write"]).toEqual(defaultRateLimits["messages:write"]);
  });

  it("sets every bucket with *, named entries winning wherever they stand", () => {
    const table = parseRateLimits("calls:write=5/1,*=1000/500");
    expect(table["calls:write"]).toEqual({ capacity: 5, refillPerSecond: 1 });
    expect(table.public).toEqual({ capacity: 1000, refillPerSecond: 500 });
    expect(table.admin).toEqual({ capacity: 1000, refillPerSecond: 500 });
  });

  it("has a default for every permission and the public bucket", () => {
    expect(Object.keys(parseRateLimits(""))).toHaveLength(14);
  });

  it.each([
    ["numbers:read=100", /capacity/],
    ["numbers:reed=1/1", /not a permission/],
    ["numbers:read=0/1", /capacity must be/],
    ["numbers:read=10/0", /refill per second/],
    ["numbers:read=-1/1", /capacity/],
  ])("rejects %s", (value, message) => {
    expect(() => parseRateLimits(value)).toThrow(message);
  });

  const required = { DATABASE_URL: "postgres://x", ...unreachableBackends };

  it("fails the boot config with the variable's name", () => {
    expect(() => loadGatewayConfig({ DATABASE_URL: "postgres://x" })).toThrow(
      /INVENTORY_ADDR is required/,
    );
    expect(() => loadGatewayConfig({ ...required, RATE_LIMITS: "calls:write=x" })).toThrow(
      /RATE_LIMITS: "calls:write=x" is not/,
    );
    expect(() => loadGatewayConfig({ ...required, REDIS_URL: "http://x" })).toThrow(/REDIS_URL/);
  });

  it("reads the policy settings", () => {
    const config = loadGatewayConfig({
      ...required,
      REDIS_URL: "redis://127.0.0.1:6379",
      TRUST_PROXY: "1",
      IDEMPOTENCY_WAIT_MS: "500",
    });
    expect(config.policies.redisUrl).toBe("redis://127.0.0.1:6379");
    expect(config.policies.idempotencyWaitMs).toBe(500);
    expect(config.policies.idempotencyLeaseSeconds).toBe(60);
    expect(config.trustProxy).toBe(1);
    expect(loadGatewayConfig({ ...required }).policies.redisUrl).toBeUndefined();
  });
});

describe("rate-limit headers", () => {
  it("states capacity, remaining, seconds to full, resource and the IETF fields", () => {
    const limit = { capacity: 10, refillPerSecond: 2 };
    const headers = rateLimitHeaders("numbers:read", limit, decisionFor(true, 6.5, limit, 1));
    expect(headers).toEqual({
      "X-RateLimit-Limit": "10",
      "X-RateLimit-Remaining": "6",
      "X-RateLimit-Reset": "2",
      "X-RateLimit-Resource": "numbers:read",
      "RateLimit-Policy": '"numbers:read";q=10;w=5',
      RateLimit: '"numbers:read";r=6;t=2',
    });
  });

  it("says how long to wait for one token when empty", () => {
    const limit = { capacity: 5, refillPerSecond: 0.5 };
    expect(decisionFor(false, 0.2, limit, 1)).toEqual({
      allowed: false,
      remaining: 0,
      resetSeconds: 10,
      retryAfterSeconds: 2,
      tokens: 0.2,
    });
    expect(windowSeconds({ capacity: 5, refillPerSecond: 100 })).toBe(1);
  });
});

describe("client address partition", () => {
  it.each([
    ["10.1.2.3", "10.1.2.3"],
    ["::ffff:10.1.2.3", "10.1.2.3"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:DB8:0:0:ffff::1%eth0", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["garbage", "unknown"],
  ])("%s → %s", (address, partition) => {
    expect(addressPartition(address)).toBe(partition);
  });
});

describe("Idempotency-Key header", () => {
  it.each([
    ["abc", "abc"],
    ["A-z_0:9.x", "A-z_0:9.x"],
    ['"quoted-key"', "quoted-key"],
    ["k".repeat(255), "k".repeat(255)],
  ])("accepts %s", (header, key) => {
    expect(parseIdempotencyKey(header)).toBe(key);
  });

  it("is optional", () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it.each(["", "k".repeat(256), "with space", "a,b", '"unterminated', '""', "é", "a/b", '"a"b"'])(
    "rejects %j as invalid-idempotency-key",
    (header) => {
      expect(() => parseIdempotencyKey(header)).toThrow(
        expect.objectContaining({ kind: "invalid-idempotency-key" }),
      );
    },
  );
});

describe("request fingerprint", () => {
  const hex = (...args: Parameters<typeof requestFingerprint>) =>
    requestFingerprint(...args).toString("hex");

  it("ignores key order and number spelling (RFC 8785)", () => {
    expect(
      hex("POST", "/api/numbers/hold", { number: "+14155550100", ttl_seconds: 600 }, "client:c"),
    ).toBe(
      hex("post", "/api/numbers/hold", { ttl_seconds: 6e2, number: "+14155550100" }, "client:c"),
    );
  });

  it("differs by method, path, body and caller", () => {
    const base = hex("POST", "/api/x", { a: 1 }, "client:cli_a");
    expect(hex("PATCH", "/api/x", { a: 1 }, "client:cli_a")).not.toBe(base);
    expect(hex("POST", "/api/y", { a: 1 }, "client:cli_a")).not.toBe(base);
    expect(hex("POST", "/api/x", { a: 2 }, "client:cli_a")).not.toBe(base);
    expect(hex("POST", "/api/x", { a: 1 }, "client:cli_b")).not.toBe(base);
    expect(hex("POST", "/api/x", { a: 1 }, "service_token:cli_a")).not.toBe(base);
    expect(hex("POST", "/api/x", undefined, "client:cli_a")).not.toBe(
      hex("POST", "/api/x", {}, "client:cli_a"),
    );
  });
});

describe("what the Idempotency-Key store keeps", () => {
  it("keeps 2xx and the operation's 4xx, never 401, 403, 429 or 5xx", () => {
    expect([200, 201, 202, 204, 400, 404, 409, 422].every(isKeptStatus)).toBe(true);
    expect([401, 403, 429, 500, 502, 503, 504].some(isKeptStatus)).toBe(false);
  });

  it("replays status, body and Location exactly, marked as replayed", () => {
    const stored = storedFromReply({
      status: 201,
      body: { id: "hld_1", b: [1, 2] },
      headers: { Location: "/v1/api/numbers/holds/hld_1", Link: "<x>" },
    });
    expect(stored).toEqual({
      status: 201,
      mediaType: "application/json",
      body: '{"id":"hld_1","b":[1,2]}',
      headers: { Location: "/v1/api/numbers/holds/hld_1" },
    });
    expect(replayOf(stored)).toEqual({
      status: 201,
      body: '{"id":"hld_1","b":[1,2]}',
      mediaType: "application/json",
      headers: { Location: "/v1/api/numbers/holds/hld_1", "Idempotent-Replayed": "true" },
    });
  });

  it("keeps an operation's problem as problem+json", () => {
    const stored = storedFromProblem(new DomainError("number-unavailable", "taken"), {
      requestId: "req_1",
      errorsUrl: "https://x/v1/errors",
    });
    expect(stored.status).toBe(409);
    expect(stored.mediaType).toBe("application/problem+json");
    expect(JSON.parse(stored.body ?? "")).toMatchObject({
      type: "https://x/v1/errors/number-unavailable",
      status: 409,
      instance: "urn:switchboard:request:req_1",
    });
  });
});

describe("idempotency purge schedule", () => {
  it("purges in batches until a short batch, then waits for the next round; stops on demand", async () => {
    const batches = [2, 2, 1, 0];
    const calls: number[] = [];
    const store = {
      purge: async (batch: number) => {
        calls.push(batch);
        return batches.shift() ?? 0;
      },
    } as unknown as IdempotencyStore;
    const stop = schedulePurge(store, {
      intervalSeconds: 0.02,
      batch: 2,
      logger: createLogger("t", { level: "silent" }),
    });
    await vi.waitFor(() => expect(calls.length).toBeGreaterThanOrEqual(4));
    stop();
    const seen = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(calls.length).toBe(seen);
    expect(calls.every((batch) => batch === 2)).toBe(true);
  });

  it("is off with an interval of 0", () => {
    const store = { purge: vi.fn() } as unknown as IdempotencyStore;
    schedulePurge(store, { intervalSeconds: 0, logger: createLogger("t", { level: "silent" }) })();
    expect(store.purge).not.toHaveBeenCalled();
  });
});
