import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const PROBLEM_KEYS = ["code", "detail", "instance", "status", "title", "type"];

async function expectProblem(response: Response, status: number, kind: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as Record<string, unknown>;
  for (const key of PROBLEM_KEYS) expect(body).toHaveProperty(key);
  expect(body.type).toBe(`http://switchboard.test/v1/errors/${kind}`);
  expect(body.status).toBe(status);
  expect(body.code).toBe(kind.replace(/-/g, "_").toUpperCase());
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toMatch(/^req_[0-9a-z]{26}$/);
  expect(body.instance).toBe(`urn:switchboard:request:${requestId}`);
  expect(response.headers.get("api-version")).toBe("v1");
  expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+|SELECT |INSERT |stack/i);
  return body;
}

/** Every error path of the gateway answers RFC 9457 problem+json with the kind of docs/api.md. */
describe("problem+json on every error path", () => {
  let platform: TestPlatform;
  let token: string;
  beforeAll(async () => {
    platform = await startTestPlatform({ database: "postgres", seed: 500 });
    token = await platform.token();
  });
  afterAll(async () => platform?.stop());

  it("unknown route → 404 not-found", async () => {
    await expectProblem(
      await platform.request("/v1/api/nothing-here", { token }),
      404,
      "not-found",
    );
  });

  it("unknown version → 404 unsupported-version naming the supported ones", async () => {
    for (const path of ["/v2/api/health", "/v0/api/numbers/search"]) {
      const body = await expectProblem(await platform.request(path), 404, "unsupported-version");
      expect(body.detail).toContain("v1");
    }
  });

  it("versioned and unversioned paths are both served by v1", async () => {
    for (const path of ["/v1/api/health", "/api/health"]) {
      const response = await platform.request(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^application\/health\+json/);
      expect(response.headers.get("api-version")).toBe("v1");
      const body = (await response.json()) as { status: string; checks: Record<string, string> };
      expect(body.status).toBe("pass");
      expect(body.checks).toMatchObject({ gateway: "pass", postgres: "pass", inventory: "pass" });
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|localhost|ms"/);
    }
  });

  it("wrong method → 405 method-not-allowed with Allow", async () => {
    const response = await platform.request("/v1/api/numbers/search", { method: "DELETE", token });
    await expectProblem(response, 405, "method-not-allowed");
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });

  it("malformed JSON → 400 malformed-request", async () => {
    const response = await platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      headers: { "Content-Type": "application/json" },
      body: '{"number": ',
    });
    await expectProblem(response, 400, "malformed-request");
  });

  it("wrong content type → 415 unsupported-media-type", async () => {
    const response = await platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      headers: { "Content-Type": "text/plain" },
      body: "number=+14155550100",
    });
    await expectProblem(response, 415, "unsupported-media-type");
  });

  it("a JSON body over 64 KiB → 413 payload-too-large", async () => {
    const response = await platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number: "+14155550100", padding: "x".repeat(70 * 1024) },
    });
    await expectProblem(response, 413, "payload-too-large");
  });

  it("invalid body → 422 validation-failed with JSON pointers", async () => {
    const response = await platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number: "4155550100", ttl_seconds: 5, extra: true },
    });
    const body = await expectProblem(response, 422, "validation-failed");
    const pointers = (body.errors as { pointer: string }[]).map((e) => e.pointer).sort();
    expect(pointers).toEqual(["#/extra", "#/number", "#/ttl_seconds"]);
  });

  it("invalid query → 422 validation-failed with #/query pointers", async () => {
    const response = await platform.request(
      "/v1/api/numbers/search?limit=500&colour=red&min_repeat=1",
      {
        token,
      },
    );
    const body = await expectProblem(response, 422, "validation-failed");
    const pointers = (body.errors as { pointer: string }[]).map((e) => e.pointer).sort();
    expect(pointers).toEqual(["#/query/colour", "#/query/limit", "#/query/min_repeat"]);
  });

  it("an invalid pattern → 422 with #/query/pattern", async () => {
    const body = await expectProblem(
      await platform.request("/v1/api/numbers/search?pattern=12%5E3", { token }),
      422,
      "validation-failed",
    );
    expect((body.errors as { pointer: string }[])[0]!.pointer).toBe("#/query/pattern");
  });

  it("a garbage cursor → 400 invalid-cursor", async () => {
    await expectProblem(
      await platform.request("/v1/api/numbers/search?cursor=not-a-cursor", { token }),
      400,
      "invalid-cursor",
    );
  });

  it("an unknown or malformed id → 404 not-found; another account never sees a hold", async () => {
    await expectProblem(
      await platform.request("/v1/api/numbers/holds/nope", { token }),
      404,
      "not-found",
    );
    await expectProblem(
      await platform.request("/v1/api/numbers/holds/hld_01jzzzzzzzzzzzzzzzzzzzzzzz", { token }),
      404,
      "not-found",
    );
  });

  it("unknown number → 404; assign of a released hold → 409 invalid-state", async () => {
    await expectProblem(
      await platform.request("/v1/api/numbers/hold", {
        method: "POST",
        token,
        json: { number: "+19999999999" },
      }),
      404,
      "not-found",
    );
    const search = await platform.request("/v1/api/numbers/search?limit=1", { token });
    const number = ((await search.json()) as { data: { number: string }[] }).data[0]!.number;
    const hold = (await (
      await platform.request("/v1/api/numbers/hold", { method: "POST", token, json: { number } })
    ).json()) as { id: string };
    const released = await platform.request(`/v1/api/numbers/holds/${hold.id}/release`, {
      method: "POST",
      token,
    });
    expect(((await released.json()) as { status: string }).status).toBe("released");
    await expectProblem(
      await platform.request(`/v1/api/numbers/holds/${hold.id}/assign`, { method: "POST", token }),
      409,
      "invalid-state",
    );
  });

  it("GET /v1/errors/<kind> documents each kind; an unknown kind is 404", async () => {
    const response = await platform.request("/v1/errors/idempotency-mismatch");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      kind: "idempotency-mismatch",
      code: "IDEMPOTENCY_MISMATCH",
      status: 409,
      title: "Idempotency-Key was reused with a different request body",
    });
    await expectProblem(await platform.request("/v1/errors/no-such-kind"), 404, "not-found");
  });

  it("serves the OpenAPI 3.1 document publicly, generated from the route table", async () => {
    for (const path of ["/v1/openapi.json", "/openapi.json"]) {
      const response = await platform.request(path);
      expect(response.status).toBe(200);
      const doc = (await response.json()) as {
        openapi: string;
        paths: Record<string, Record<string, { "x-required-scope": string | null }>>;
      };
      expect(doc.openapi).toBe("3.1.0");
      expect(doc.paths["/v1/api/numbers/search"]!.get!["x-required-scope"]).toBe("numbers:read");
      expect(Object.keys(doc.paths).length).toBe(
        platform.gateway.routes.map((r) => r.path).filter((p, i, a) => a.indexOf(p) === i).length,
      );
    }
  });

  it("a backend that is down → 503 service-unavailable with Retry-After; health says warn", async () => {
    const other = await startTestPlatform({
      database: "postgres",
      env: { GRPC_DEADLINE_MS: "2000" },
    });
    try {
      const otherToken = await other.token();
      await other.stopInventory();
      const response = await other.request("/v1/api/numbers/search", { token: otherToken });
      await expectProblem(response, 503, "service-unavailable");
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      const health = (await (await other.request("/api/health")).json()) as {
        status: string;
        checks: Record<string, string>;
      };
      expect(health.status).toBe("warn");
      expect(health.checks.inventory).toBe("warn");
    } finally {
      await other.stop();
    }
  });
});
