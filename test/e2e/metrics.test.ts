import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { samplesOf, scrape, valueOf, type Sample } from "@switchboard/test-support/prometheus-text";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

await requireTestRedis();

const waitFor = async (check: () => Promise<boolean>, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/**
 * `/metrics` on the admin port after real traffic through the platform (PostgreSQL, Redis,
 * BullMQ): a success, a 404 of a route, a 404 of no route, a 429, gRPC calls, queue jobs and
 * a webhook delivery that is retried once, then delivered.
 */
describe("metrics on the admin port (PostgreSQL + Redis)", () => {
  let p: TestPlatform;
  let receiver: Receiver;
  let samples: Sample[];
  const holdId = `hld_${"0".repeat(26)}`;
  const unmatchedPath = "/v1/api/nothing/here/4242424242";

  beforeAll(async () => {
    receiver = await startReceiver();
    p = await startTestPlatform({
      redis: true,
      admin: true,
      seed: 50,
      env: { RATE_LIMITS: "*=100000/100000,usage:read=1/0.001" },
      serviceEnv: {
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
        WEBHOOK_RETRY_SCHEDULE: "100ms,200ms",
      },
    });
    const token = await p.token();
    expect((await p.request("/v1/api/numbers/search?limit=1", { token })).status).toBe(200);
    expect((await p.request(`/v1/api/numbers/holds/${holdId}`, { token })).status).toBe(404);
    expect((await p.request(unmatchedPath, { token })).status).toBe(404);
    expect((await p.request("/v1/api/usage/events?limit=1", { token })).status).toBe(200);
    expect((await p.request("/v1/api/usage/events?limit=1", { token })).status).toBe(429);

    const created = await p.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url: receiver.url, events: ["number.held"] },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    receiver.script(500);
    const test = await p.request(`/v1/api/webhooks/subscriptions/${id}/test`, {
      method: "POST",
      token,
    });
    expect(test.status).toBeLessThan(300);
    await waitFor(async () => receiver.received.length >= 2, "a retried, then delivered, webhook");
    await waitFor(async () => {
      samples = await scrape(p.admin!.url);
      return (
        valueOf(samples, "webhook_deliveries_total", { outcome: "delivered" }) >= 1 &&
        valueOf(samples, "grpc_server_handled_total", {
          method: "AppendRequestRecords",
          code: "OK",
        }) >= 1
      );
    }, "the delivery and the records' hand-off to usage in the metrics");
  });
  afterAll(async () => {
    await p?.stop();
    await receiver?.close();
  });

  it("HTTP: requests and latency per method, route template and status", () => {
    const search = { method: "GET", route: "/v1/api/numbers/search", status: "200" };
    expect(valueOf(samples, "http_server_requests_total", search)).toBe(1);
    expect(valueOf(samples, "http_server_request_duration_seconds_count", search)).toBe(1);
    expect(samplesOf(samples, "http_server_request_duration_seconds_bucket", search).length).toBe(
      12,
    );
    expect(
      valueOf(samples, "http_server_requests_total", {
        route: "/v1/api/numbers/holds/{hold_id}",
        status: "404",
      }),
    ).toBe(1);
    expect(
      valueOf(samples, "http_server_requests_total", { route: "unmatched", status: "404" }),
    ).toBe(1);
    expect(
      valueOf(samples, "http_server_requests_total", {
        route: "/v1/api/usage/events",
        status: "429",
      }),
    ).toBe(1);
    expect(
      valueOf(samples, "http_server_requests_total", {
        method: "POST",
        route: "/v1/oauth/token",
        status: "200",
      }),
    ).toBeGreaterThanOrEqual(1);
  });

  it("no raw path or id ever becomes a route label: only templates of the route table", () => {
    const templates = new Set(p.gateway.routes.map((route) => `/v1${route.path}`));
    const routes = new Set(
      samples.filter((s) => s.name.startsWith("http_server_")).map((s) => s.labels.route),
    );
    expect(routes.size).toBeGreaterThan(3);
    for (const route of routes) {
      expect(route === "unmatched" || templates.has(route!), route).toBe(true);
    }
    const text = JSON.stringify(samples);
    expect(text).not.toContain(holdId);
    expect(text).not.toContain("4242424242");
  });

  it("gRPC: server and client calls per service, method and code, with durations", () => {
    const search = {
      service: "switchboard.inventory.v1.InventoryService",
      method: "SearchNumbers",
    };
    for (const side of ["server", "client"]) {
      expect(valueOf(samples, `grpc_${side}_handled_total`, { ...search, code: "OK" })).toBe(1);
      expect(valueOf(samples, `grpc_${side}_handling_seconds_count`, search)).toBe(1);
      expect(
        valueOf(samples, `grpc_${side}_handled_total`, {
          service: search.service,
          code: "NOT_FOUND",
        }),
      ).toBe(1);
    }
  });

  it("rate limits: rejections per permission; store errors (fail-open) at zero", () => {
    expect(valueOf(samples, "rate_limit_rejections_total", { permission: "usage:read" })).toBe(1);
    expect(samplesOf(samples, "rate_limit_store_errors_total")).toEqual([
      { name: "rate_limit_store_errors_total", labels: {}, value: 0 },
    ]);
  });

  it("the record relay: its hand-offs to the usage ledger as gRPC calls of both sides", () => {
    const append = { service: "switchboard.usage.v1.UsageService", method: "AppendRequestRecords" };
    for (const side of ["server", "client"]) {
      expect(
        valueOf(samples, `grpc_${side}_handled_total`, { ...append, code: "OK" }),
      ).toBeGreaterThanOrEqual(1);
    }
    expect(samplesOf(samples, "usage_records_unhanded")).toHaveLength(1);
  });

  it("queues: depth per state of the consumed queues, and job outcomes", () => {
    for (const state of ["waiting", "active", "delayed", "failed"]) {
      expect(samplesOf(samples, "queue_jobs", { queue: "events.usage", state })).toHaveLength(1);
      expect(samplesOf(samples, "queue_jobs", { queue: "webhook.deliveries", state })).toHaveLength(
        1,
      );
    }
    const outcome = (queue: string, name: string) =>
      valueOf(samples, "queue_jobs_processed_total", { queue, outcome: name });
    expect(outcome("webhook.deliveries", "retry")).toBe(1);
    expect(outcome("webhook.deliveries", "completed")).toBe(1);
  });

  it("webhooks: deliveries by outcome and their latency", () => {
    expect(valueOf(samples, "webhook_deliveries_total", { outcome: "retry" })).toBe(1);
    expect(valueOf(samples, "webhook_deliveries_total", { outcome: "delivered" })).toBe(1);
    expect(valueOf(samples, "webhook_deliveries_total", { outcome: "failed" })).toBe(0);
    expect(samplesOf(samples, "webhook_deliveries_total", { outcome: "disabled" })).toHaveLength(1);
    expect(valueOf(samples, "webhook_delivery_duration_seconds_count")).toBe(2);
  });

  it("pools: connections per state and the maximum, per pool", () => {
    for (const pool of ["gateway", "inventory", "usage", "call-control", "messaging", "webhook"]) {
      expect(
        valueOf(samples, "db_pool_connections", { pool, state: "total" }),
        pool,
      ).toBeGreaterThan(0);
      expect(samplesOf(samples, "db_pool_connections", { pool, state: "waiting" })).toHaveLength(1);
    }
    expect(valueOf(samples, "db_pool_max", { pool: "inventory" })).toBe(8);
    expect(valueOf(samples, "db_pool_max", { pool: "gateway" })).toBe(10);
  });

  it("build info and the standard process metrics", () => {
    for (const component of [
      "gateway",
      "inventory",
      "usage",
      "call-control",
      "messaging",
      "webhook",
    ]) {
      expect(valueOf(samples, "switchboard_build_info", { component }), component).toBe(1);
    }
    expect(samplesOf(samples, "process_cpu_user_seconds_total")).toHaveLength(1);
    expect(samplesOf(samples, "nodejs_heap_size_used_bytes")).toHaveLength(1);
  });

  it("/livez is 200 and /readyz 200 on a healthy platform", async () => {
    expect((await fetch(`${p.admin!.url}/livez`)).status).toBe(200);
    const ready = await fetch(`${p.admin!.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { status: string }).status).toBe("pass");
  });
});
