import { describe, expect, it } from "vitest";
import { createSwitchboard, retryAfterSeconds } from "@switchboard/sdk";

/** The parts a generator cannot give: retries, Idempotency-Key on writes, token reuse. */
describe("@switchboard/sdk helpers", () => {
  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterSeconds("3")).toBe(3);
    expect(retryAfterSeconds(null)).toBeUndefined();
    const inTwo = new Date(Date.now() + 2_000).toUTCString();
    expect(retryAfterSeconds(inTwo)).toBeGreaterThan(0);
  });

  it("retries 429 and 503 as Retry-After says, with the same Idempotency-Key, and reuses its token", async () => {
    const seen: { url: string; key: string | null; auth: string | null }[] = [];
    const answers = [
      new Response(JSON.stringify({ access_token: "t1", expires_in: 900 }), { status: 200 }),
      new Response("{}", { status: 429, headers: { "Retry-After": "0" } }),
      new Response("{}", { status: 503, headers: { "Retry-After": "0" } }),
      new Response(JSON.stringify({ id: "agt_1" }), {
        status: 201,
        headers: { "Content-Type": "application/json" },
      }),
      new Response(JSON.stringify({ data: [], next_cursor: null, has_more: false }), {
        status: 200,
        headers: { "Content-Type": "application/json" },
      }),
    ];
    const fake = (async (input: Request | string | URL) => {
      const request = input instanceof Request ? input : new Request(input);
      seen.push({
        url: request.url,
        key: request.headers.get("idempotency-key"),
        auth: request.headers.get("authorization"),
      });
      return answers.shift()!;
    }) as typeof fetch;
    const sb = createSwitchboard({
      baseUrl: "http://sdk.test",
      clientId: "cli_x",
      clientSecret: "secret",
      fetch: fake,
    });
    const created = await sb.api.POST("/v1/api/agents", { body: { name: "x" } });
    expect(created.response.status).toBe(201);
    const writes = seen.filter((s) => s.url.endsWith("/v1/api/agents"));
    expect(writes).toHaveLength(3);
    expect(new Set(writes.map((w) => w.key)).size).toBe(1);
    expect(writes[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(writes.every((w) => w.auth === "Bearer t1")).toBe(true);
    await sb.api.GET("/v1/api/agents");
    // One token request for both calls; a read carries no Idempotency-Key.
    expect(seen.filter((s) => s.url.endsWith("/oauth/token"))).toHaveLength(1);
    expect(seen.at(-1)!.key).toBeNull();
  });
});
