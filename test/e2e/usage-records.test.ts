import { randomBytes } from "node:crypto";
import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "@switchboard/kit";
import {
  requestIdOf,
  startUsagePlatform,
  type UsagePlatform,
} from "@switchboard/test-support/fixtures/usage-platform";
import { verifySignedRecord as verifyRecord } from "@switchboard/kit";

type Item = Record<string, unknown> & { id: string; kid: string; request_id: string | null };
type Page = { data: Item[]; next_cursor: string | null; has_more: boolean };

interface Expectation {
  route: string | null;
  status: number;
  method?: string;
  account_id?: string;
  principal?: string | null;
  resource_id?: string | null;
  replayed?: boolean;
}

describe("an api.request record for every reply (PostgreSQL + Redis)", () => {
  let p: UsagePlatform;
  let token: string;
  const platformAccount = "acct_platform";

  beforeAll(async () => {
    p = await startUsagePlatform();
    token = await p.token();
  });
  afterAll(() => p?.stop());

  const jwks = async () =>
    createLocalJWKSet((await (await p.request("/.well-known/jwks.json")).json()) as JSONWebKeySet);

  /** Searches an available number (the record of that search is not checked). */
  const availableNumber = async (offset: number): Promise<string> => {
    const page = (await (await p.request("/api/numbers/search?limit=20", { token })).json()) as {
      data: { number: string }[];
    };
    return page.data[offset]!.number;
  };

  it("lands exactly one api.request record for every reply, whatever produced it", async () => {
    const checks: { requestId: string; expected: Expectation }[] = [];
    const track = async (
      response: Promise<Response>,
      expected: Expectation,
      status = expected.status,
    ) => {
      const r = await response;
      expect(r.status, `${expected.route} → ${r.status}`).toBe(status);
      checks.push({ requestId: requestIdOf(r), expected });
      return r;
    };
    const mine = { account_id: p.accountId, principal: p.clientId };
    const anonymous = { account_id: platformAccount, principal: null };
    const basic = `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString("base64")}`;
    const form = { "Content-Type": "application/x-www-form-urlencoded" };

    // Public routes: the platform's own account, no principal.
    await track(p.request("/api/health"), {
      route: "/api/health",
      status: 200,
      method: "GET",
      ...anonymous,
    });
    await track(p.request("/v1/openapi.json"), {
      route: "/openapi.json",
      status: 200,
      ...anonymous,
    });
    await track(p.request("/.well-known/jwks.json"), {
      route: "/.well-known/jwks.json",
      status: 200,
      ...anonymous,
    });
    await track(p.request("/.well-known/oauth-authorization-server"), {
      route: "/.well-known/oauth-authorization-server",
      status: 200,
    });
    await track(p.request("/v1/errors/not-found"), {
      route: "/errors/{kind}",
      status: 200,
      resource_id: null,
    });
    await track(
      p.request("/oauth/token", {
        method: "POST",
        headers: { Authorization: basic, ...form },
        body: "grant_type=client_credentials",
      }),
      { route: "/oauth/token", status: 200, method: "POST", ...anonymous },
    );
    await track(
      p.request("/oauth/token", {
        method: "POST",
        headers: {
          Authorization: `Basic ${Buffer.from(`${p.clientId}:wrong-secret-000000`).toString("base64")}`,
          ...form,
        },
        body: "grant_type=client_credentials",
      }),
      { route: "/oauth/token", status: 401, ...anonymous },
    );

    // The numbers walkthrough: holds, assignment, the account's numbers.
    await track(p.request("/api/numbers/search?limit=3", { token }), {
      route: "/api/numbers/search",
      status: 200,
      ...mine,
    });
    const first = await availableNumber(0);
    const held = await track(
      p.request("/api/numbers/hold", { method: "POST", token, json: { number: first } }),
      {
        route: "/api/numbers/hold",
        status: 201,
        method: "POST",
        ...mine,
      },
    );
    const hold = (await held.json()) as { id: string; number_id: string };
    checks.at(-1)!.expected.resource_id = hold.id;
    await track(p.request(`/api/numbers/holds/${hold.id}`, { token }), {
      route: "/api/numbers/holds/{hold_id}",
      status: 200,
      resource_id: hold.id,
    });
    await track(p.request(`/v1/api/numbers/holds/${hold.id}/release`, { method: "POST", token }), {
      route: "/api/numbers/holds/{hold_id}/release",
      status: 200,
      resource_id: hold.id,
    });
    const missing = newId("hld");
    await track(p.request(`/api/numbers/holds/${missing}`, { token }), {
      route: "/api/numbers/holds/{hold_id}",
      status: 404,
      resource_id: missing,
      ...mine,
    });
    const second = (await (
      await p.request("/api/numbers/hold", {
        method: "POST",
        token,
        json: { number: await availableNumber(1) },
      })
    ).json()) as { id: string; number_id: string };
    await track(
      p.request(`/api/numbers/holds/${second.id}/assign`, { method: "POST", token, json: {} }),
      {
        route: "/api/numbers/holds/{hold_id}/assign",
        status: 200,
        resource_id: second.id,
      },
    );
    await track(p.request("/api/numbers", { token }), { route: "/api/numbers", status: 200 });
    await track(p.request(`/api/numbers/${second.number_id}`, { token }), {
      route: "/api/numbers/{number_id}",
      status: 200,
      resource_id: second.number_id,
    });
    await track(p.request(`/api/numbers/${second.number_id}/release`, { method: "POST", token }), {
      route: "/api/numbers/{number_id}/release",
      status: 200,
    });

    // The ledger's own routes.
    const listed = await track(p.request("/api/usage/events?limit=1", { token }), {
      route: "/api/usage/events",
      status: 200,
      ...mine,
    });
    const someone = ((await listed.json()) as Page).data[0]!;
    await track(p.request(`/api/usage/events/${someone.id}`, { token }), {
      route: "/api/usage/events/{id}",
      status: 200,
      resource_id: someone.id,
    });

    // Failures before, around and outside the routes.
    await track(p.request("/api/numbers/search"), {
      route: "/api/numbers/search",
      status: 401,
      ...anonymous,
    });
    await track(p.request("/api/numbers/search", { token: "not.a.token" }), {
      route: "/api/numbers/search",
      status: 401,
      ...anonymous,
    });
    const narrow = await p.token("numbers:read");
    await track(p.request("/api/usage/events", { token: narrow }), {
      route: "/api/usage/events",
      status: 403,
      ...mine,
    });
    await track(p.request("/api/nothing-here", { token }), {
      route: null,
      status: 404,
      ...anonymous,
    });
    await track(p.request("/v2/api/numbers", { token }), {
      route: null,
      status: 404,
      ...anonymous,
    });
    await track(p.request("/api/numbers/search", { method: "DELETE", token }), {
      route: "/api/numbers/search",
      status: 405,
      method: "DELETE",
    });
    await track(
      p.request("/api/numbers/hold", {
        method: "POST",
        token,
        headers: { "Content-Type": "application/json" },
        body: "{nope",
      }),
      { route: "/api/numbers/hold", status: 400 },
    );
    await track(
      p.request("/api/numbers/hold", {
        method: "POST",
        token,
        headers: { "Content-Type": "text/plain" },
        body: "x",
      }),
      { route: "/api/numbers/hold", status: 415 },
    );
    await track(p.request("/api/numbers/search?limit=500", { token }), {
      route: "/api/numbers/search",
      status: 422,
      ...mine,
    });
    await track(p.request("/api/usage/events?since=yesterday", { token }), {
      route: "/api/usage/events",
      status: 422,
    });

    // 429, from a second gateway replica on the same queue with a one-token bucket.
    const replica = await p.test.startReplica({
      REDIS_KEY_PREFIX: `sbtest_${randomBytes(4).toString("hex")}:`,
      RATE_LIMITS: "*=100000/100000,numbers:read=1/0.001",
    });
    try {
      await track(p.request("/api/numbers/search?limit=1", { token, base: replica.url }), {
        route: "/api/numbers/search",
        status: 200,
      });
      await track(p.request("/api/numbers/search?limit=1", { token, base: replica.url }), {
        route: "/api/numbers/search",
        status: 429,
        ...mine,
      });
    } finally {
      await replica.stop();
    }

    const ids = checks.map((c) => c.requestId);
    expect(new Set(ids).size).toBe(ids.length);
    await p.waitForRequests(ids);
    const stored = await p.storedRequests(ids);
    const keys = await jwks();
    for (const { requestId, expected } of checks) {
      const row = stored.get(requestId)!;
      expect(row.count, requestId).toBe(1);
      const record: Item = { ...(JSON.parse(row.payload) as Item), signature: row.signature };
      expect(record, `${expected.route} ${expected.status}`).toMatchObject({
        kind: "api.request",
        request_id: requestId,
        quantity: 1,
        unit: "request",
        replayed: expected.replayed ?? false,
        ...expected,
      });
      expect((record.attributes as { latency_ms: number }).latency_ms).toBeGreaterThanOrEqual(0);
      expect(await verifyRecord(record, keys)).toBe(true);
    }
  });

  it("marks the record of a replayed idempotent request replayed: true", async () => {
    const key = `usage-${randomBytes(6).toString("hex")}`;
    const body = { number: await availableNumber(2) };
    const original = await p.request("/api/numbers/hold", {
      method: "POST",
      token,
      json: body,
      headers: { "Idempotency-Key": key },
    });
    const replay = await p.request("/api/numbers/hold", {
      method: "POST",
      token,
      json: body,
      headers: { "Idempotency-Key": key },
    });
    expect(original.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const hold = (await original.json()) as { id: string };
    const ids = [requestIdOf(original), requestIdOf(replay)];
    await p.waitForRequests(ids);
    const stored = await p.storedRequests(ids);
    const [first, again] = ids.map((id) => JSON.parse(stored.get(id)!.payload) as Item);
    expect(first).toMatchObject({ replayed: false, status: 201, resource_id: hold.id });
    expect(again).toMatchObject({ replayed: true, status: 201, resource_id: hold.id });
  });
});
