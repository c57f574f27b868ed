import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const APP = "https://app.example.com";

/**
 * A browser app on an origin the operator lists (CORS_ORIGINS) can call the API: its preflight
 * is answered without a credential, and replies let it read the headers it needs; an origin not
 * listed gets no CORS headers (the browser refuses it). HEAD is answered as GET, without a body.
 */
describe("CORS and HEAD", () => {
  let p: TestPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { CORS_ORIGINS: `${APP}, https://admin.example.com` } });
    token = await p.token();
  });
  afterAll(async () => p?.stop());

  it("answers a listed origin's preflight 204 with the methods, headers and exposed headers", async () => {
    const preflight = await fetch(`${p.url}/v1/api/numbers/hold`, {
      method: "OPTIONS",
      headers: {
        Origin: APP,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(APP);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain(
      "idempotency-key",
    );
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("lets a listed origin read the reply's own headers, and tells nothing to another origin", async () => {
    const listed = await fetch(`${p.url}/v1/api/numbers?limit=1`, {
      headers: { Origin: APP, Authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("access-control-allow-origin")).toBe(APP);
    const exposed = listed.headers.get("access-control-expose-headers")?.toLowerCase() ?? "";
    for (const name of ["x-request-id", "retry-after", "ratelimit", "location"]) {
      expect(exposed).toContain(name);
    }
    const other = await fetch(`${p.url}/v1/api/numbers?limit=1`, {
      headers: { Origin: "https://evil.example", Authorization: `Bearer ${token}` },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers HEAD as GET: the same status and headers, no body", async () => {
    const get = await fetch(`${p.url}/v1/api/numbers?limit=1`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const head = await fetch(`${p.url}/v1/api/numbers?limit=1`, {
      method: "HEAD",
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(head.status).toBe(get.status);
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(await head.text()).toBe("");
    const unauthenticated = await fetch(`${p.url}/v1/api/numbers?limit=1`, { method: "HEAD" });
    expect(unauthenticated.status).toBe(401);
  });
});
