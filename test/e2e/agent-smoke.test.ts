import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignedRecord as verifyRecord } from "@switchboard/kit";
import type { TestPlatform } from "@switchboard/test-support/platform";
import {
  activeHolds,
  allStepNames,
  runSmoke,
  smokeTimeoutMs,
  smokeWithout,
  startSmokePlatform,
  stepOf,
  waitFor,
  type SmokeBody,
  type UsageItem,
} from "./agent-smoke-support.js";

/** POST /api/agent/smoke on real PostgreSQL and Redis: a pass, its records, outages, deadlines. */
describe("the agent smoke (PostgreSQL + Redis)", () => {
  let p: TestPlatform;
  let token: string;

  beforeAll(async () => {
    p = await startSmokePlatform("postgres");
    token = await p.token();
  });
  afterAll(async () => p?.stop());

  const usageEvents = async (query: string) =>
    (
      (await (await p.request(`/v1/api/usage/events?${query}`, { token })).json()) as {
        data: UsageItem[];
      }
    ).data;

  it("passes with every step passing, lands a signed smoke.run record and leaves nothing held", async () => {
    const { response, body } = await runSmoke(p, token);
    expect(response.status).toBe(200);
    expect(body.steps.map((s) => s.name)).toEqual(allStepNames);
    expect(body.steps.filter((s) => s.status !== "pass")).toEqual([]);
    expect(body).toMatchObject({ status: "pass", id: expect.stringMatching(/^smk_/) });
    expect(stepOf(body, "resources").detail).toMatch(/\(created agent, seat, number, route\)$/);
    expect(stepOf(body, "usage.records").detail).toMatch(/^6 records found and verified/);

    expect(await activeHolds(p)).toBe(0);
    const subscriptions = await p.request("/v1/api/webhooks/subscriptions", { token });
    expect(((await subscriptions.json()) as { data: unknown[] }).data).toEqual([]);

    const jwks = createLocalJWKSet(
      (await (await p.request("/.well-known/jwks.json")).json()) as JSONWebKeySet,
    );
    const [record] = await waitFor(
      () => usageEvents(`kind=smoke.run&resource_id=${body.id}`),
      (items) => items.length > 0,
    );
    expect(record).toMatchObject({
      kind: "smoke.run",
      account_id: p.accountId,
      principal: p.clientId,
      request_id: response.headers.get("x-request-id"),
      unit: "run",
      quantity: 1,
      attributes: { smoke_id: body.id, status: "pass", duration_ms: body.duration_ms },
    });
    expect(await verifyRecord(record!, jwks)).toBe(true);
    // The smoke's own request lands its api.request record like any other.
    const requests = await waitFor(
      () => usageEvents("kind=api.request&limit=200"),
      (items) => items.some((i) => i.request_id === response.headers.get("x-request-id")),
    );
    expect(
      requests.find((i) => i.request_id === response.headers.get("x-request-id")),
    ).toMatchObject({ route: "/api/agent/smoke", method: "POST", status: 200 });
  });

  it("reuses its resources on the next run and replays under the same Idempotency-Key", async () => {
    const headers = { "Idempotency-Key": "smoke-replay-1" };
    const first = await runSmoke(p, token, headers);
    expect(first.body.status).toBe("pass");
    expect(stepOf(first.body, "resources").detail).toMatch(/all reused/);
    const again = await runSmoke(p, token, headers);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const numbers = await p.request("/v1/api/numbers", { token });
    expect(((await numbers.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  it("answers 403 insufficient-scope to a token without agent:smoke", async () => {
    const narrow = await p.token("numbers:read usage:read");
    const response = await p.request("/v1/api/agent/smoke", { method: "POST", token: narrow });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: "INSUFFICIENT_SCOPE" });
  });

  it("with messaging stopped: 200 fail naming messages.send, the rest passing, within the deadline", async () => {
    const { response, body, elapsedMs } = await smokeWithout(
      p,
      token,
      "messaging",
      "/v1/api/messages?limit=1",
    );
    expect(elapsedMs).toBeLessThan(smokeTimeoutMs);
    expect(response.status).toBe(200);
    expect(body.status).toBe("fail");
    expect(body.steps.filter((s) => s.status === "fail").map((s) => s.name)).toEqual([
      "messages.send",
    ]);
    expect(stepOf(body, "messages.send").detail).toBe(
      "service-unavailable: the messaging service is unavailable",
    );
    expect(stepOf(body, "calls.outbound").status).toBe("pass");
    expect(stepOf(body, "usage.records").detail).toMatch(/^5 records found and verified/);
  });

  it("with inventory stopped: 200 fail naming numbers.search, dependants skipped, within the deadline; pass once it is back", async () => {
    const { response, body, elapsedMs } = await smokeWithout(
      p,
      token,
      "inventory",
      "/v1/api/numbers/search?limit=1",
    );
    expect(elapsedMs).toBeLessThan(smokeTimeoutMs);
    expect(response.status).toBe(200);
    expect(body.status).toBe("fail");
    expect(stepOf(body, "numbers.search")).toMatchObject({
      status: "fail",
      detail: "service-unavailable: the inventory service is unavailable",
    });
    expect(stepOf(body, "resources").status).toBe("fail");
    for (const name of ["numbers.hold", "numbers.release", "calls.outbound", "messages.send"]) {
      expect(stepOf(body, name)).toMatchObject({ status: "skipped", duration_ms: 0 });
    }
    expect(stepOf(body, "webhooks.delivery").status).toBe("pass");
    expect(stepOf(body, "cleanup").status).toBe("pass");
    const after = (await runSmoke(p, token)).body;
    expect(after.steps.filter((s) => s.status !== "pass")).toEqual([]);
  });

  it("a step past its own deadline fails naming what it waited for, and the cleanup hangs up", async () => {
    // This replica believes sandbox calls last 0 s: the call steps get 800 ms for 1.5 s calls.
    const replica = await p.startReplica({
      SMOKE_STEP_TIMEOUT_MS: "800",
      SANDBOX_CALL_SECONDS: "0",
    });
    const response = await fetch(`${replica.url}/v1/api/agent/smoke`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    const body = (await response.json()) as SmokeBody;
    expect(response.status).toBe(200);
    expect(stepOf(body, "calls.outbound")).toMatchObject({
      status: "fail",
      detail: "timed out after 800 ms waiting for the outbound call to complete",
    });
    expect(stepOf(body, "cleanup").detail).toMatch(/undone: .*call call_/);
    expect(await activeHolds(p)).toBe(0);
  });
});
